import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CAPTURE_PATHS } from '@tributary/payload';
import { ENV_VARIABLES } from './index.js';

/**
 * Ports and routes are written by hand in the config defaults, the start scripts, both nginx
 * configs and docker-compose; the config defaults and the capture route list are the source,
 * and every other copy must agree with them.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

const SERVICES = ['capture', 'decide', 'api', 'ingest', 'worker'] as const;
const PROXIED = ['capture', 'decide', 'api'] as const;
const portOf = (service: (typeof SERVICES)[number]) => {
  const [variable, port] = ENV_VARIABLES[`${service}Port`];
  return { variable, port };
};
const FRONT_PORT = new URL(ENV_VARIABLES.publicUrl[1]).port;

/** nginx's location regex for the capture paths, each with an optional trailing slash. */
const captureLocation = `location ~ ^/(${CAPTURE_PATHS.map((p) => p.slice(1)).join('|')})/?$ { proxy_pass http://capture; }`;
const locations = (conf: string) => conf.split('\n').map((line) => line.trim()).filter((line) => /^(location|error_page)\b/.test(line));

describe('deployment files agree with the config defaults', () => {
  it('infra/services.sh waits on each service at its configured port', () => {
    const script = read('infra/services.sh');
    for (const service of SERVICES) {
      const { variable, port } = portOf(service);
      expect(script).toContain(`[${service}]=\${${variable}:-${port}}`);
    }
  });

  it("infra/services.sh lets make up's exports reach its S3Proxy at S3_ENDPOINT and the machine's Postgres, unless set otherwise", () => {
    const allowed = (env: Record<string, string> = {}) =>
      execFileSync('bash', ['-c', `${/^s3_host_port=.*$/m.exec(read('infra/services.sh'))![0]}\n${/^export BATCH_EXPORT_ALLOWED_DESTINATIONS=.*$/m.exec(read('infra/services.sh'))![0]}\necho "$BATCH_EXPORT_ALLOWED_DESTINATIONS"`], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '', ...env },
      }).trim();
    const s3 = new URL(ENV_VARIABLES.s3Endpoint[1]);
    const postgres = new URL(ENV_VARIABLES.databaseUrl[1]);
    expect(allowed()).toBe(`${s3.host},${postgres.hostname}:${postgres.port}`);
    expect(allowed({ S3_ENDPOINT: 'http://127.0.0.1:9333/' })).toBe(`127.0.0.1:9333,${postgres.hostname}:${postgres.port}`);
    expect(allowed({ BATCH_EXPORT_ALLOWED_DESTINATIONS: '10.0.0.0/8' })).toBe('10.0.0.0/8');
  });

  it("every way of starting a service gives node infra/node-flags.sh's flags: ingest's heap settings, a 16 MB semi-space for every service", () => {
    const flags = (service: string, env: Record<string, string> = {}) =>
      execFileSync('sh', [path.join(root, 'infra/node-flags.sh'), service], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', ...env } }).trim();
    expect(flags('ingest')).toBe('--max-old-space-size=256 --heap-growing-percent=100 --max-semi-space-size=16');
    expect(flags('ingest', { INGEST_MAX_OLD_SPACE_MB: '512', INGEST_HEAP_GROWING_PERCENT: '0' })).toBe('--max-old-space-size=512 --heap-growing-percent=0 --max-semi-space-size=16');
    expect(flags('ingest', { INGEST_SEMI_SPACE_MB: '64' })).toBe('--max-old-space-size=256 --heap-growing-percent=100 --max-semi-space-size=64');
    expect(flags('ingest', { NODE_SEMI_SPACE_MB: '32' })).toBe('--max-old-space-size=256 --heap-growing-percent=100 --max-semi-space-size=32');
    for (const service of SERVICES.filter((s) => s !== 'ingest')) {
      expect(flags(service)).toBe('--max-semi-space-size=16');
      expect(flags(service, { NODE_SEMI_SPACE_MB: '64' })).toBe('--max-semi-space-size=64');
    }
    expect(read('infra/services.sh')).toContain('node $(sh "$ROOT/infra/node-flags.sh" "$service") --conditions=tributary-compiled');
    expect(read('Dockerfile')).toContain('exec node $(sh infra/node-flags.sh ${SERVICE}) --conditions=tributary-compiled');
    expect(read('bench/ingest.ts')).toContain("execFileSync('sh', ['infra/node-flags.sh', 'ingest']");
    expect(read('bench/capture.ts')).toContain("execFileSync('sh', ['infra/node-flags.sh', 'capture']");
  });

  it('every install applies the patches to dependencies, the image\'s production-only install too', () => {
    const manifest = JSON.parse(read('package.json')) as { scripts: Record<string, string>; dependencies: Record<string, string> };
    expect(manifest.scripts.postinstall).toBe('patch-package --error-on-fail');
    expect(Object.keys(manifest.dependencies)).toContain('patch-package');
    const dockerfile = read('Dockerfile');
    expect(dockerfile.indexOf('COPY patches ./patches')).toBeGreaterThan(-1);
    expect(dockerfile.indexOf('COPY patches ./patches')).toBeLessThan(dockerfile.indexOf('RUN npm ci --omit=dev'));
  });

  it('infra/nginx/nginx.sh fills in the configured ports and the front port of PUBLIC_URL', () => {
    const script = read('infra/nginx/nginx.sh');
    for (const service of PROXIED) {
      const { variable, port } = portOf(service);
      expect(script).toContain(`s#__${variable}__#\${${variable}:-${port}}#`);
    }
    expect(script).toContain(`s#__FRONT_PORT__#\${FRONT_PORT:-${FRONT_PORT}}#`);
    expect(read('infra/up.sh')).toContain(`\${FRONT_PORT:-${FRONT_PORT}}`);
  });

  it('the nginx template proxies each service to its port marker', () => {
    const template = read('infra/nginx/nginx.conf.template');
    for (const service of PROXIED) expect(template).toMatch(new RegExp(`upstream ${service}\\s+\\{ server 127\\.0\\.0\\.1:__${portOf(service).variable}__;`));
  });

  it('the docker nginx config proxies each service to its configured port and listens on the front port', () => {
    const conf = read('infra/nginx/docker.conf');
    for (const service of PROXIED) expect(conf).toMatch(new RegExp(`upstream ${service}\\s+\\{ server ${service}:${portOf(service).port};`));
    expect(conf).toContain(`listen ${FRONT_PORT};`);
  });

  it('docker-compose runs each service on its configured port and publishes the front port', () => {
    const compose = read('docker-compose.yml');
    for (const service of SERVICES) {
      const { variable, port } = portOf(service);
      expect(compose).toMatch(new RegExp(`SERVICE: ${service}, ${variable}: ${port}( \\}|,)`));
    }
    expect(compose).toContain(`ports: ["${FRONT_PORT}:${FRONT_PORT}"]`);
    expect(compose).toContain(`PUBLIC_URL: http://localhost:${FRONT_PORT}`);
  });

  it('nginx sends the status page to the api and keeps every service\'s metrics and probes off the public paths', () => {
    const conf = read('infra/nginx/nginx.conf.template');
    const routed = (path: string) =>
      locations(conf).filter((line) => {
        const regex = /^location ~ (\S+) \{/.exec(line)?.[1];
        if (regex) return new RegExp(regex).test(path);
        const exact = /^location = (\S+) \{/.exec(line)?.[1];
        if (exact) return exact === path;
        const prefix = /^location (\/\S*) \{/.exec(line)?.[1];
        return prefix !== undefined && prefix !== '/' && path.startsWith(prefix);
      });
    expect(routed('/status')).toEqual([expect.stringMatching(/^location ~ \^\/\(dashboards\|.*\|status\).*try_files \/index\.html/)]);
    for (const internal of ['/metrics', '/metrics/', '/_ready']) expect(routed(internal)).toEqual([]);
  });

  it('every answer nginx makes by itself is JSON in the one error shape, not its HTML page', () => {
    const conf = read('infra/nginx/nginx.conf.template');
    const pages = new Map<string, string>();
    for (const [, codes, uri] of conf.matchAll(/error_page ([\d ]+?) (?:=\d+ )?(\S+);/g)) for (const code of codes!.split(' ')) pages.set(code, uri!);
    // Malformed requests, headers or URIs too large, bodies past the limit, protocols it does not
    // speak, a method it refuses (TRACE), a path nothing routes, and a service that is down.
    for (const code of ['400', '404', '405', '408', '411', '413', '414', '494', '500', '501', '502', '504', '505']) {
      const uri = pages.get(code);
      expect({ code, uri }).toEqual({ code, uri: expect.stringMatching(/^\/_errors\//) });
      // An answer for a service that is away also closes the connection (`keepalive_timeout 0`).
      const body = new RegExp(`location = ${uri} \\{ internal;( keepalive_timeout 0;)? default_type application/json; return (\\d{3}) '([^']*)'; \\}`).exec(conf);
      expect({ code, found: Boolean(body) }).toEqual({ code, found: true });
      expect(JSON.parse(body![3]!)).toEqual({ type: expect.any(String), code: expect.any(String), detail: expect.stringMatching(/\w/), attr: null });
      // A client's malformed request is a 4xx whatever nginx's own code: only the services' faults are 5xx.
      if (!['500', '502', '504'].includes(code)) expect(Number(body![2])).toBeLessThan(500);
    }
  });

  it('both nginx configs send every capture path to capture, and route everything else the same way', () => {
    const template = read('infra/nginx/nginx.conf.template');
    const docker = read('infra/nginx/docker.conf');
    expect(locations(template)).toContain(captureLocation);
    expect(locations(docker)).toEqual(locations(template));
  });
});
