import net from 'node:net';

/**
 * The chaos stack's only way to its Kafka broker: the broker advertises this relay's port
 * (KAFKA_ADVERTISED_PORT), so every client, bootstrap and produce alike, goes through it. On
 * SIGUSR1 it starts losing the broker's answers: it passes each request on and cuts the
 * connection when the broker answers, after the broker has acted on the request, as a network
 * that fails mid-request does; SIGUSR2 ends that. A producer then cannot know whether what it
 * sent was written.
 */

const listenPort = Number(process.env.KAFKA_LINK_PORT);
const brokerPort = Number(process.env.KAFKA_PORT);
let losingAnswers = false;
process.on('SIGUSR1', () => {
  losingAnswers = true;
  console.log(`${new Date().toISOString()} losing the broker's answers`);
});
process.on('SIGUSR2', () => {
  losingAnswers = false;
  console.log(`${new Date().toISOString()} passing the broker's answers on again`);
});

/** Passes `from`'s bytes to `to`, holding `from` while `to` is full; `answers` may be cut instead. */
function relay(from: net.Socket, to: net.Socket, answers: boolean, cut: () => void): void {
  from.on('data', (data) => {
    if (answers && losingAnswers) return cut();
    if (!to.write(data)) {
      from.pause();
      to.once('drain', () => from.resume());
    }
  });
}

const server = net.createServer((client) => {
  const broker = net.connect(brokerPort, '127.0.0.1');
  const cut = () => {
    client.destroy();
    broker.destroy();
  };
  relay(client, broker, false, cut);
  relay(broker, client, true, cut);
  for (const socket of [client, broker]) socket.on('error', cut).on('close', cut);
});
server.listen(listenPort, '127.0.0.1', () => console.log(`${new Date().toISOString()} relaying 127.0.0.1:${listenPort} to the broker on ${brokerPort}`));
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => process.exit(0));
