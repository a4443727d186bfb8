/**
 * The baseline the capture and decide benches compare against, in its own process so that it
 * does not share a thread with the load generator: a plain node:http server that reads each
 * body, parses it as JSON and answers a fixed JSON body. Prints its port on stdout.
 * Run: npx tsx bench/bare-server.ts <answer JSON>
 */
import http from 'node:http';

const answer = Buffer.from(process.argv[2] ?? '{"status":1}');
const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    JSON.parse(Buffer.concat(chunks).toString());
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length });
    res.end(answer);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => console.log((server.address() as { port: number }).port));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
