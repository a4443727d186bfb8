import { startProbe } from './probe-fixture.js';
import type { ServiceRuntime } from './service-runtime.js';
import type { Dependencies } from './readiness.js';

/** `/_ready` over HTTP: the status code a load balancer acts on, and the body naming each store. */
async function readiness(dependencies: Dependencies): Promise<{ status: number; body: unknown }> {
  let runtime: ServiceRuntime | undefined;
  try {
    runtime = await startProbe({ dependencies });
    const response = await fetch(`http://127.0.0.1:${runtime.port}/_ready`);
    return { status: response.status, body: await response.json() };
  } finally {
    await runtime?.shutdown('test');
  }
}

const up = async () => true;
const down = async (): Promise<boolean> => {
  throw new Error('ECONNREFUSED');
};

test('an optional store away leaves the service in rotation, degraded, and says which', async () => {
  expect(await readiness({ kafka: { check: up, required: true }, redis: { check: down, required: false } })).toEqual({
    status: 200,
    body: { status: 'degraded', service: 'probe', checks: { kafka: 'ok', redis: 'unavailable' } },
  });
});

test('a required store away takes the service out of rotation with a 503', async () => {
  expect(await readiness({ kafka: { check: down, required: true }, redis: { check: up, required: false } })).toEqual({
    status: 503,
    body: { status: 'not_ready', service: 'probe', checks: { kafka: 'unavailable', redis: 'ok' } },
  });
});
