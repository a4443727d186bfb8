import { clientErrorResponse, type ClientError } from './client-error.js';

const parseError = (code: string, reason: string): ClientError => Object.assign(new Error(`Parse Error: ${reason}`), { code, reason });

/** Status line and JSON body of a raw response. */
function read(raw: string): { status: number; length: number; body: unknown } {
  const [head, body] = raw.split('\r\n\r\n') as [string, string];
  return { status: Number(head.split(' ')[1]), length: Number(/Content-Length: (\d+)/.exec(head)?.[1]), body: JSON.parse(body) };
}

describe('requests node:http cannot parse', () => {
  it('are answered in the one error shape, not with a bare 400 (an unknown method and a raw byte in the path were)', () => {
    expect(read(clientErrorResponse(parseError('HPE_INVALID_METHOD', 'Invalid method encountered')))).toEqual({
      status: 400,
      length: expect.any(Number),
      body: { type: 'invalid_request', code: 'unknown_method', detail: expect.stringMatching(/method is not one HTTP defines/), attr: null },
    });
    expect(read(clientErrorResponse(parseError('HPE_INVALID_URL', 'Invalid char in url path'))).body).toEqual({
      type: 'invalid_request',
      code: 'bad_request',
      detail: 'The request is not valid HTTP/1.1: invalid char in url path.',
      attr: null,
    });
  });

  it('keep node:http\'s statuses for headers too large and a request too slow', () => {
    expect(read(clientErrorResponse(parseError('HPE_HEADER_OVERFLOW', 'Header overflow'))).status).toBe(431);
    expect(read(clientErrorResponse(Object.assign(new Error('timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }))).status).toBe(408);
  });

  it('state the body\'s length in bytes', () => {
    const raw = clientErrorResponse(parseError('HPE_INVALID_URL', 'Invalid char in url path'));
    expect(read(raw).length).toBe(Buffer.byteLength(raw.split('\r\n\r\n')[1]!));
  });
});
