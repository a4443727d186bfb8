import { createLogger } from '@tributary/logger';
import { stopInOrder } from './stop-in-order.js';

const logger = createLogger('stop-in-order-test', 'silent');

describe('stopInOrder', () => {
  it('awaits each step before starting the next', async () => {
    const done: string[] = [];
    const later = (name: string, ms: number) => () => new Promise<void>((resolve) => setTimeout(() => (done.push(name), resolve()), ms));
    await stopInOrder(logger, [['consumer', later('consumer', 20)], ['pool', later('pool', 0)], ['redis', () => void done.push('redis')]])();
    expect(done).toEqual(['consumer', 'pool', 'redis']);
  });

  it('runs the remaining steps after one fails, then throws the first failure', async () => {
    const done: string[] = [];
    const stop = stopInOrder(logger, [
      ['producer', () => Promise.reject(new Error('broker gone'))],
      ['pool', () => void done.push('pool')],
      ['redis', () => { throw new Error('second'); }],
    ]);
    await expect(stop()).rejects.toThrow('broker gone');
    expect(done).toEqual(['pool']);
  });
});
