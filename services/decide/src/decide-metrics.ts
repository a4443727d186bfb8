import { TalliedCounter, type Registry, type Tally } from '@tributary/http';

export type DecideCache = 'answers' | 'flag_definitions' | 'person_copies' | 'person_properties' | 'unknown_distinct_ids';

/** What decide counts beside its HTTP requests: flags evaluated, and how often its caches answered. */
export interface DecideMetrics {
  evaluated(enabled: number, disabled: number): void;
  cacheLookup(cache: DecideCache, hit: boolean): void;
}

export function decideMetrics(registry: Registry): DecideMetrics {
  const evaluations = new TalliedCounter({
    name: 'tributary_decide_flag_evaluations_total',
    help: 'Flags evaluated for a distinct id, by whether the flag came out enabled.',
    labelNames: ['enabled'] as const,
    registers: [registry],
  });
  const lookups = new TalliedCounter({
    name: 'tributary_decide_cache_lookups_total',
    help: 'Lookups in decide caches (answers remembered by request, flag definitions, persons and ids known to have no person in memory, person properties in Redis), by hit or miss.',
    labelNames: ['cache', 'outcome'] as const,
    registers: [registry],
  });
  // Tallied (see TalliedCounter): every request counts several times.
  const enabledTrue = evaluations.tally({ enabled: 'true' });
  const enabledFalse = evaluations.tally({ enabled: 'false' });
  const byCache = new Map<string, { hit: Tally; miss: Tally }>();
  return {
    evaluated: (enabled, disabled) => {
      enabledTrue.inc(enabled);
      enabledFalse.inc(disabled);
    },
    cacheLookup: (cache, hit) => {
      let counters = byCache.get(cache);
      if (!counters) {
        counters = { hit: lookups.tally({ cache, outcome: 'hit' }), miss: lookups.tally({ cache, outcome: 'miss' }) };
        byCache.set(cache, counters);
      }
      (hit ? counters.hit : counters.miss).inc();
    },
  };
}
