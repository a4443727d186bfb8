import http from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import type { DestinationGuard } from './destination-guard.js';

type Connected = (error: Error | null, socket: Duplex) => void;

/**
 * Checks the host and port a connection is for, then opens it to the address that was checked,
 * so the name is resolved once per connection and a second answer (DNS rebinding) is never used.
 * The request keeps its Host header and TLS its server name, so certificates are verified against
 * the name as usual.
 */
function connectChecked(guard: DestinationGuard, options: http.ClientRequestArgs, connect: (options: http.ClientRequestArgs) => Duplex, callback: Connected, defaultPort: number): void {
  const host = options.host ?? options.hostname ?? 'localhost';
  guard.check(host, Number(options.port) || defaultPort).then(
    ({ addresses }) => {
      let socket: Duplex;
      try {
        socket = connect({ ...options, host: addresses[0]!, hostname: addresses[0]! });
      } catch (error) {
        callback(error as Error, undefined as never);
        return;
      }
      callback(null, socket);
    },
    (error: Error) => callback(error, undefined as never),
  );
}

/** An HTTP agent whose every connection goes to an address `guard` accepted. */
export class CheckedHttpAgent extends http.Agent {
  constructor(
    private readonly guard: DestinationGuard,
    options?: http.AgentOptions,
  ) {
    super(options);
  }

  override createConnection(options: http.ClientRequestArgs, callback?: Connected): undefined {
    connectChecked(this.guard, options, (checked) => super.createConnection(checked)!, callback!, 80);
    return undefined;
  }
}

/** An HTTPS agent whose every connection goes to an address `guard` accepted, verified against the name. */
export class CheckedHttpsAgent extends https.Agent {
  constructor(
    private readonly guard: DestinationGuard,
    options?: https.AgentOptions,
  ) {
    super(options);
  }

  override createConnection(options: http.ClientRequestArgs, callback?: Connected): undefined {
    connectChecked(this.guard, options, (checked) => super.createConnection(checked)!, callback!, 443);
    return undefined;
  }
}
