import { assessReadiness } from './readiness.js';

const up = async () => true;
const down = async () => false;
const failing = async (): Promise<boolean> => {
  throw new Error('ECONNREFUSED');
};
const hanging = () => new Promise<boolean>(() => undefined);

describe('readiness', () => {
  it('is ready when every store answers', async () => {
    expect(await assessReadiness({ kafka: { check: up, required: true }, redis: { check: up, required: false } })).toEqual({
      status: 'ready',
      checks: { kafka: 'ok', redis: 'ok' },
    });
  });

  it('is only degraded when an optional store is away, and names it', async () => {
    expect(await assessReadiness({ kafka: { check: up, required: true }, redis: { check: failing, required: false } })).toEqual({
      status: 'degraded',
      checks: { kafka: 'ok', redis: 'unavailable' },
    });
  });

  it('is not ready when a required store is away, answering or not', async () => {
    const report = await assessReadiness({ kafka: { check: hanging, required: true }, postgres: { check: down, required: true } }, 50);
    expect(report).toEqual({ status: 'not_ready', checks: { kafka: 'unavailable', postgres: 'unavailable' } });
  });
});
