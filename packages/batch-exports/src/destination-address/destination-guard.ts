import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { internalRange, plainAddress, type IpAddress } from './address-ranges.js';
import { parseHost } from './destination-host.js';
import { DestinationRefused } from './destination-refused.js';
import { ruleCovers, type DestinationRule } from './destination-rules.js';

/** A name's addresses, as the system's resolver gives them; tests pass one that answers as they need. */
export type Resolve = (name: string) => Promise<string[]>;

export const systemResolve: Resolve = async (name) => (await lookup(name, { all: true, verbatim: true })).map((answer) => answer.address);

/** This installation's own store or service at these addresses: never a destination. */
export interface StackDestination extends DestinationRule {
  /** What it is, as the refusal names it: "ClickHouse (HTTP)". */
  what: string;
  /** Only this database there, where the rule is the installation's Postgres. */
  database?: string;
}

export interface DestinationPolicy {
  /** Internal destinations the operator allows (BATCH_EXPORT_ALLOWED_DESTINATIONS). */
  allowed: DestinationRule[];
  /** Refused whatever `allowed` says. */
  denied: StackDestination[];
}

/** Where a checked destination may be connected to. */
export interface CheckedHost {
  /** The host name, which TLS verifies the server's certificate against; null for an IP address. */
  name: string | null;
  /** Addresses to connect to, each checked; nothing else is. */
  addresses: string[];
}

/** A name that does not resolve now; it may later, so a run tries again. */
export class DestinationUnresolved extends Error {
  constructor(name: string, cause: unknown) {
    super(`${name} does not resolve${cause instanceof Error && 'code' in cause ? ` (${String(cause.code)})` : ''}`, { cause });
    this.name = 'DestinationUnresolved';
  }
}

/**
 * Decides whether a destination is someone else's server. A host is resolved once, every address
 * it resolves to must be a public one or allowed by the operator, and none may be this
 * installation's own store or service. Callers connect to the addresses returned and nowhere
 * else, so a name whose answer changes after the check (DNS rebinding) cannot move a connection.
 */
export class DestinationGuard {
  constructor(
    private readonly policy: DestinationPolicy,
    private readonly resolve: Resolve = systemResolve,
  ) {}

  /** Throws DestinationRefused saying why, or DestinationUnresolved. */
  async check(host: string, port: number, database?: string): Promise<CheckedHost> {
    const parsed = parseHost(host);
    const addresses = 'address' in parsed ? [parsed.address] : await this.addressesOf(parsed.name);
    const named = await this.ruleNames();
    for (const address of addresses) this.refuseUnlessAllowed('name' in parsed ? parsed.name : null, address, port, database, named);
    return { name: 'name' in parsed ? parsed.name : null, addresses: addresses.map((address) => plainAddress(address).toString()) };
  }

  private refuseUnlessAllowed(name: string | null, address: IpAddress, port: number, database: string | undefined, named: ReadonlyMap<string, IpAddress[]>): void {
    const shown = address.toString();
    const own = this.policy.denied.find((rule) => ruleCovers(rule, address, port, named) && (rule.database === undefined || rule.database === database));
    if (own) {
      const at = address.kind() === 'ipv6' ? `[${shown}]:${port}` : `${shown}:${port}`;
      throw new DestinationRefused(`${name === null ? '' : `${name} resolves to ${shown}; `}${at} is this installation's ${own.what}`);
    }
    const range = internalRange(address);
    if (range === null) return;
    const is = name === null ? `${shown} is` : `${name} resolves to ${shown}, which is`;
    if (range.metadata) throw new DestinationRefused(`${is} ${range.why}`);
    if (this.policy.allowed.some((rule) => ruleCovers(rule, address, port, named))) return;
    throw new DestinationRefused(`${is} ${range.why}, not a public address`);
  }

  private async addressesOf(name: string): Promise<IpAddress[]> {
    let answers: string[];
    try {
      answers = await this.resolve(name);
    } catch (error) {
      throw new DestinationUnresolved(name, error);
    }
    if (answers.length === 0) throw new DestinationUnresolved(name, null);
    return answers.map((answer) => {
      if (!ipaddr.isValid(answer)) throw new DestinationRefused(`${name} resolves to ${JSON.stringify(answer)}, which is not an IP address`);
      return ipaddr.parse(answer);
    });
  }

  /** What the rules' names resolve to now; a name that does not resolve covers nothing. */
  private async ruleNames(): Promise<Map<string, IpAddress[]>> {
    const names = new Set([...this.policy.allowed, ...this.policy.denied].flatMap((rule) => ('name' in rule.target ? [rule.target.name] : [])));
    const resolved = await Promise.all([...names].map(async (name) => [name, await this.addressesOf(name).catch(() => [])] as const));
    return new Map(resolved);
  }
}
