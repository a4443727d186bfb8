/**
 * A destination that is not someone else's server (this installation, a private network, a
 * metadata service). The message says why, in words safe to show the tenant; no other attempt
 * can change that answer for the address it names.
 */
export class DestinationRefused extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'DestinationRefused';
  }
}
