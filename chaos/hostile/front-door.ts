/**
 * Requests aimed at nginx itself: broken request lines and headers, lying lengths, paths no
 * service routes. nginx answers most of them without asking a service, and those answers must be
 * in the same JSON error shape as the services' own.
 */
import type { HostileCase } from './cases.js';
import { FRONT_DOOR_PATHS, METHODS } from './routes.js';

const ROUTE = 'nginx';

export interface RawCase extends HostileCase {
  raw: Buffer;
  /**
   * The request never ends (a blank line and no request line, a chunked body cut off): there is
   * nothing to answer, so the server may close the connection without an answer, as nginx does
   * when `client_header_timeout` or `client_body_timeout` runs out. It must close it, though.
   */
  incomplete?: boolean;
}

export function frontDoorCases(host: string): (HostileCase | RawCase)[] {
  const out: (HostileCase | RawCase)[] = [];
  const raw = (name: string, text: string | Buffer, method = 'GET', incomplete = false) =>
    out.push({ name: `raw ${name}`, route: ROUTE, method, path: '', headers: {}, auth: 'none', raw: Buffer.isBuffer(text) ? text : Buffer.from(text, 'latin1'), ...(incomplete ? { incomplete } : {}) });
  const h = `Host: ${host}\r\nConnection: close\r\n`;
  raw('no host', 'GET / HTTP/1.1\r\nConnection: close\r\n\r\n');
  raw('two hosts', `GET /capture/ HTTP/1.1\r\n${h}Host: other\r\n\r\n`);
  raw('garbage request line', Buffer.concat([Buffer.from([0, 1, 2, 0xff]), Buffer.from(' / HTTP/1.1\r\n\r\n')]));
  raw('lowercase method', `get / HTTP/1.1\r\n${h}\r\n`);
  raw('http/2.0 version', `GET /capture/ HTTP/2.0\r\n${h}\r\n`);
  raw('http/3.7 version', `GET /api/projects/ HTTP/3.7\r\n${h}\r\n`);
  raw('http/1.1x version', `GET / HTTP/1.1x\r\n${h}\r\n`);
  raw('uri too long', `GET /api/${'a'.repeat(20_000)} HTTP/1.1\r\n${h}\r\n`);
  raw('query too long', `GET /decide/?x=${'a'.repeat(20_000)} HTTP/1.1\r\n${h}\r\n`);
  raw('header too large', `GET /api/projects/ HTTP/1.1\r\n${h}X-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
  raw('cookie too large', `GET /decide/ HTTP/1.1\r\n${h}Cookie: ${'a=b; '.repeat(4_000)}\r\n\r\n`);
  raw('too many headers', `GET /api/projects/ HTTP/1.1\r\n${h}${Array.from({ length: 3000 }, (_, i) => `X-H${i}: ${'v'.repeat(10)}\r\n`).join('')}\r\n`);
  raw('content-length too large', `POST /batch/ HTTP/1.1\r\n${h}Content-Type: application/json\r\nContent-Length: 100000000\r\n\r\n{`, 'POST');
  raw('content-length too large on api', `POST /api/environments/1/cohorts/ HTTP/1.1\r\n${h}Content-Type: application/json\r\nContent-Length: 999999999999\r\n\r\n{`, 'POST');
  raw('content-length not a number', `POST /capture/ HTTP/1.1\r\n${h}Content-Length: abc\r\n\r\n{}`, 'POST');
  raw('content-length negative', `POST /capture/ HTTP/1.1\r\n${h}Content-Length: -5\r\n\r\n{}`, 'POST');
  raw('two content-lengths', `POST /capture/ HTTP/1.1\r\n${h}Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}`, 'POST');
  raw('content-length and chunked', `POST /capture/ HTTP/1.1\r\n${h}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`, 'POST');
  raw('bad chunk size', `POST /capture/ HTTP/1.1\r\n${h}Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`, 'POST');
  raw('chunked truncated', `POST /batch/ HTTP/1.1\r\n${h}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{"api_key":`, 'POST', true);
  raw('unknown transfer-encoding', `POST /capture/ HTTP/1.1\r\n${h}Transfer-Encoding: gzip\r\n\r\n{}`, 'POST');
  raw('obs-fold header', `GET / HTTP/1.1\r\n${h}X-Folded: a\r\n b\r\n\r\n`);
  raw('header without colon', `GET /api/projects/ HTTP/1.1\r\n${h}NoColon\r\n\r\n`);
  raw('header name with space', `GET /api/projects/ HTTP/1.1\r\n${h}Bad Header: x\r\n\r\n`);
  raw('nul in header', `GET /api/projects/ HTTP/1.1\r\n${h}X-Nul: a\u0000b\r\n\r\n`);
  raw('bare LF line endings', `GET /decide/ HTTP/1.1\nHost: ${host}\nConnection: close\n\n`);
  raw('absolute uri', `GET http://elsewhere.test/api/projects/ HTTP/1.1\r\n${h}\r\n`);
  raw('path traversal', `GET /../../../etc/passwd HTTP/1.1\r\n${h}\r\n`);
  raw('encoded traversal', `GET /api/%2e%2e/%2e%2e/%2e%2e/etc/passwd HTTP/1.1\r\n${h}\r\n`);
  raw('nul in path', `GET /api/%00/ HTTP/1.1\r\n${h}\r\n`);
  raw('raw nul in path', Buffer.concat([Buffer.from('GET /api/'), Buffer.from([0]), Buffer.from(`/ HTTP/1.1\r\n${h}\r\n`)]));
  raw('invalid utf-8 in path', Buffer.concat([Buffer.from('GET /api/environments/'), Buffer.from([0xff, 0xfe]), Buffer.from(`/events/ HTTP/1.1\r\n${h}\r\n`)]));
  raw('space in path', `GET /api/projects /x HTTP/1.1\r\n${h}\r\n`);
  raw('asterisk target', `OPTIONS * HTTP/1.1\r\n${h}\r\n`, 'OPTIONS');
  raw('connect', `CONNECT 127.0.0.1:22 HTTP/1.1\r\n${h}\r\n`, 'CONNECT');
  raw('trace', `TRACE /capture/ HTTP/1.1\r\n${h}\r\n`, 'TRACE');
  raw('trace on api', `TRACE /api/projects/ HTTP/1.1\r\n${h}\r\n`, 'TRACE');
  raw('very long method', `${'A'.repeat(5000)} / HTTP/1.1\r\n${h}\r\n`, 'A');
  raw('expect 100-continue too large', `POST /batch/ HTTP/1.1\r\n${h}Expect: 100-continue\r\nContent-Length: 900000000\r\n\r\n`, 'POST');
  raw('unknown expect', `POST /capture/ HTTP/1.1\r\n${h}Expect: the-unexpected\r\nContent-Length: 2\r\n\r\n{}`, 'POST');
  raw('upgrade h2c', `GET /decide/ HTTP/1.1\r\n${h}Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n`);
  raw('empty request', '\r\n\r\n', 'GET', true);
  for (const path of FRONT_DOOR_PATHS) {
    for (const method of METHODS) out.push({ name: `front door ${method} ${path}`, route: ROUTE, method, path, headers: {}, auth: 'none' });
  }
  return out;
}
