import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createClickHouse } from './client.js';
import { sql } from './sql.js';

/**
 * ClickHouse closes a keep-alive connection idle for 3 s (18.16 and every release before 23.11).
 * The client drops idle sockets before that, but a process starved of CPU can reuse one a moment
 * too late: the request meets a closed connection and fails with "socket hang up", which the api
 * answered as a 500. A stand-in server that closes each connection on its second request, as
 * ClickHouse does to one reused too late, shows what a read does then.
 */
describe('a read whose keep-alive connection the server closed as it was reused', () => {
  const served = new WeakMap<Socket, number>();
  const server = http.createServer((req, res) => {
    const count = (served.get(req.socket) ?? 0) + 1;
    served.set(req.socket, count);
    if (count > 1) {
      req.socket.destroy();
      return;
    }
    req.resume();
    req.on('end', () => res.end('{"n":"1"}\n'));
  });
  let port: number;
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('is sent again on a new connection, once', async () => {
    const clickhouse = createClickHouse({ clickhouseUrl: `http://127.0.0.1:${port}`, clickhouseDatabase: 'tributary', clickhouseUser: 'default', clickhousePassword: '' });
    try {
      for (let i = 0; i < 5; i++) expect(await clickhouse.query(sql`SELECT 1 AS n`)).toEqual([{ n: '1' }]);
    } finally {
      await clickhouse.close();
    }
  });
});
