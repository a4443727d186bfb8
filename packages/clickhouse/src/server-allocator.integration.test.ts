import { readdirSync, readFileSync } from 'node:fs';

/** The environment of every clickhouse-server process on this machine (the stack's, one or four). */
function clickhouseServerEnvironments(): string[][] {
  const environments: string[][] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (!command[0]?.endsWith('clickhouse-server')) continue;
      environments.push(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0'));
    } catch {
      // A process that ended while the list was read.
    }
  }
  return environments;
}

describe("the stack's ClickHouse servers", () => {
  // Under infra/clickhouse/clickhouse.sh's address-space limit, jemalloc's retained address space
  // made a server that had run heavy queries fail every allocation with errno 12.
  it('run with jemalloc returning freed address space (retain off)', () => {
    const environments = clickhouseServerEnvironments();
    expect(environments.length).toBeGreaterThan(0);
    for (const environment of environments) expect(environment).toContain('MALLOC_CONF=retain:false');
  });
});
