import { AnswerDroppingRelay } from '@tributary/test-support';

/**
 * The chaos stack's only way to its Kafka broker: the broker advertises this relay's port
 * (KAFKA_ADVERTISED_PORT), so every client, bootstrap and produce alike, goes through it. On
 * SIGUSR1 it starts losing the broker's answers (see AnswerDroppingRelay); SIGUSR2 ends that.
 */

const listenPort = Number(process.env.KAFKA_LINK_PORT);
const brokerPort = Number(process.env.KAFKA_PORT);
const relay = new AnswerDroppingRelay('127.0.0.1', brokerPort);
const say = (line: string) => console.log(`${new Date().toISOString()} ${line}`);
process.on('SIGUSR1', () => {
  relay.losingAnswers = true;
  say("losing the broker's answers");
});
process.on('SIGUSR2', () => {
  relay.losingAnswers = false;
  say("passing the broker's answers on again");
});
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => process.exit(0));
await relay.listen(listenPort);
say(`relaying 127.0.0.1:${listenPort} to the broker on ${brokerPort}`);
