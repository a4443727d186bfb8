import { Counter, type Registry } from '@tributary/http';

export type DecideCache = 'flag_definitions' | 'person_copies' | 'person_properties' | 'unknown_distinct_ids';

/** What decide counts beside its HTTP requests: flags evaluated, and how often its caches answered. */
export interface DecideMetrics {
  evaluated(enabled: number, disabled: number): void;
  cacheLookup(cache: DecideCache, hit: boolean): void;
}

export function decideMetrics(registry: Registry): DecideMetrics {
  const evaluations = new Counter({
    name: 'tributary_decide_flag_evaluations_total',
    help: 'Flags evaluated for a distinct id, by whether the flag came out enabled.',
    labelNames: ['enabled'] as const,
    registers: [registry],
  });
  const lookups = new Counter({
    name: 'tributary_decide_cache_lookups_total',
    help: 'Lookups in decide caches (flag definitions, persons and ids known to have no person in memory, person properties in Redis), by hit or miss.',
    labelNames: ['cache', 'outcome'] as const,
    registers: [registry],
  });
  // Children bound to their labels once: every request counts several times.
  const enabledTrue = evaluations.labels({ enabled: 'true' });
  const enabledFalse = evaluations.labels({ enabled: 'false' });
  const byCache = new Map<string, { hit: ReturnType<typeof lookups.labels>; miss: ReturnType<typeof lookups.labels> }>();
  return {
    evaluated: (enabled, disabled) => {
      enabledTrue.inc(enabled);
      enabledFalse.inc(disabled);
    },
    cacheLookup: (cache, hit) => {
      let counters = byCache.get(cache);
      if (!counters) {
        counters = { hit: lookups.labels({ cache, outcome: 'hit' }), miss: lookups.labels({ cache, outcome: 'miss' }) };
        byCache.set(cache, counters);
      }
      (hit ? counters.hit : counters.miss).inc();
    },
  };
}
