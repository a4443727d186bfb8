import http from 'node:http';
import type { CaptureMessage } from '@tributary/kafka';
import { startServiceRuntime, type ServiceRuntime } from '@tributary/http';
import { loadConfig } from '@tributary/config';
import { createLogger } from '@tributary/logger';
import { captureRoutes } from '../src/capture-routes.js';

/**
 * The client's address (an event's `ip`, decide's GeoIP) comes from X-Forwarded-For only when a
 * trusted proxy sent it (TRUSTED_PROXIES). 127.0.0.2 stands for another host: Linux routes all
 * of 127/8 to loopback, so a request can come from it, and the default trusts 127.0.0.1 only.
 */
const logger = createLogger('trusted-proxies-test', 'silent');

async function start(trustedProxies: string[] | undefined) {
  const published: CaptureMessage[] = [];
  const runtime: ServiceRuntime = await startServiceRuntime(
    {
      name: 'capture-proxies',
      logger,
      host: '127.0.0.1',
      port: 0,
      shutdownTimeoutMs: 1_000,
      ...(trustedProxies ? { trustedProxies } : {}),
      direct: captureRoutes({
        tokens: { resolve: async () => ({ id: 1 }) },
        publisher: { publish: async (messages) => void published.push(...messages) },
        logger,
        maxBatchBytes: 65_536,
        maxEventBytes: 65_536,
      }),
      routes: (app) => app.get('/express-ip', (req, res) => res.json({ ip: req.ip })),
      dependencies: {},
      stop: async () => undefined,
    },
    false,
  );
  return { runtime, published };
}

/** A request from `from`, saying it forwards for 81.2.69.142. */
function send(port: number, from: string, path: string, body?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path, localAddress: from, method: body ? 'POST' : 'GET', headers: { 'x-forwarded-for': '81.2.69.142', 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve(text));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const EVENT = JSON.stringify({ api_key: 'phc_proxies', event: 'e', distinct_id: 'd' });

async function addresses(trustedProxies: string[] | undefined, from: string) {
  const { runtime, published } = await start(trustedProxies);
  try {
    await send(runtime.port, from, '/e/', EVENT);
    const express = JSON.parse(await send(runtime.port, from, '/express-ip')) as { ip: string };
    return { event: published[0]?.ip, express: express.ip };
  } finally {
    await runtime.shutdown('test finished');
  }
}

describe('trusted proxies', () => {
  it('by default believe X-Forwarded-For from 127.0.0.1, where nginx connects from', async () => {
    expect(await addresses(loadConfig({}).trustedProxies, '127.0.0.1')).toEqual({ event: '81.2.69.142', express: '81.2.69.142' });
  });

  it('by default ignore X-Forwarded-For from another host, and take its own address', async () => {
    expect(await addresses(loadConfig({}).trustedProxies, '127.0.0.2')).toEqual({ event: '127.0.0.2', express: '127.0.0.2' });
  });

  it('are the same in the runtime when a service passes none', async () => {
    expect(await addresses(undefined, '127.0.0.2')).toEqual({ event: '127.0.0.2', express: '127.0.0.2' });
  });

  it('believe a listed address or CIDR range (TRUSTED_PROXIES), in direct routes and Express alike', async () => {
    expect(await addresses(loadConfig({ TRUSTED_PROXIES: '127.0.0.1, 127.0.0.2' }).trustedProxies, '127.0.0.2')).toEqual({ event: '81.2.69.142', express: '81.2.69.142' });
    expect(await addresses(['127.0.0.2/32'], '127.0.0.2')).toEqual({ event: '81.2.69.142', express: '81.2.69.142' });
  });
});
