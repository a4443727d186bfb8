/** Addresses remembered at most; past it all are forgotten at once, so a flood of new ones costs little. */
const MAX_ADDRESSES = 10_000;

/**
 * A client address's location properties, looked up once per address: SDKs ask decide again and
 * again from the same few, a batch's events reach ingest together from one, and the database
 * lookup (parse, tree walk, record decode) costs more than the map. The database is fixed for the
 * process's life, so an answer never goes stale; answers are shared, so callers must not mutate them.
 */
export function memoisedByAddress<T>(lookup: (ip: string | undefined | null) => T): (ip: string | undefined | null) => T {
  const known = new Map<string, T>();
  return (ip) => {
    if (ip === undefined || ip === null) return lookup(ip);
    let found = known.get(ip);
    if (found === undefined) {
      found = lookup(ip);
      if (known.size >= MAX_ADDRESSES) known.clear();
      known.set(ip, found);
    }
    return found;
  };
}
