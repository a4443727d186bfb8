import net from 'node:net';

/**
 * Stands between clients and a broker. While `losingAnswers` is set it passes requests on and
 * cuts the connection when the broker answers, after the broker has acted on the request, as a
 * network that fails mid-request does: a producer cannot know whether what it sent was written.
 */
export class AnswerDroppingRelay {
  losingAnswers = false;
  private readonly server = net.createServer((client) => {
    const broker = net.connect(this.brokerPort, this.brokerHost);
    const cut = () => {
      client.destroy();
      broker.destroy();
    };
    this.relay(client, broker, false, cut);
    this.relay(broker, client, true, cut);
    for (const socket of [client, broker]) socket.on('error', cut).on('close', cut);
  });

  constructor(
    private readonly brokerHost: string,
    private readonly brokerPort: number,
  ) {}

  /** Listens on `port` (0: one the kernel picks) and returns it. */
  async listen(port = 0): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve));
    return (this.server.address() as net.AddressInfo).port;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** Passes `from`'s bytes to `to`, holding `from` while `to` is full; answers may be cut instead. */
  private relay(from: net.Socket, to: net.Socket, answers: boolean, cut: () => void): void {
    from.on('data', (data) => {
      if (answers && this.losingAnswers) return cut();
      if (!to.write(data)) {
        from.pause();
        to.once('drain', () => from.resume());
      }
    });
  }
}
