import { Counter, Registry } from 'prom-client';
import { TalliedCounter } from './tallied-counter.js';

describe('TalliedCounter', () => {
  it('scrapes the same totals as a prom-client counter counted at once, across several scrapes', async () => {
    const registry = new Registry();
    const tallied = new TalliedCounter({ name: 'tallied_total', help: 'h', labelNames: ['kind'] as const, registers: [registry] });
    const direct = new Counter({ name: 'direct_total', help: 'h', labelNames: ['kind'] as const, registers: [registry] });
    const hit = tallied.tally({ kind: 'hit' });
    const miss = tallied.tally({ kind: 'miss' });
    const count = (kind: 'hit' | 'miss', by?: number) => {
      (kind === 'hit' ? hit : miss).inc(by);
      direct.labels({ kind }).inc(by);
    };
    const values = async (name: string) => {
      const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name)!;
      return Object.fromEntries(metric.values.map((v) => [v.labels.kind, v.value]));
    };

    count('hit');
    count('hit', 3);
    expect(await values('tallied_total')).toEqual({ hit: 4 });
    expect(await values('tallied_total')).toEqual(await values('direct_total'));
    count('miss');
    count('hit');
    expect(await values('tallied_total')).toEqual({ hit: 5, miss: 1 });
    expect(await values('tallied_total')).toEqual(await values('direct_total'));
    expect(await registry.metrics()).toContain('tallied_total{kind="hit"} 5');
  });

  it('shows a label set from its first count, by 0 too, as prom-client does, and none never counted', async () => {
    const registry = new Registry();
    const tallied = new TalliedCounter({ name: 'zero_total', help: 'h', labelNames: ['enabled'] as const, registers: [registry] });
    const on = tallied.tally({ enabled: 'true' });
    const off = tallied.tally({ enabled: 'false' });
    tallied.tally({ enabled: 'never' });
    on.inc(3);
    off.inc(0);
    const text = await registry.metrics();
    expect(text).toContain('zero_total{enabled="true"} 3');
    expect(text).toContain('zero_total{enabled="false"} 0');
    expect(text).not.toContain('never');
  });

  it('refuses a negative or non-finite count where it is made, leaving later scrapes intact', async () => {
    const registry = new Registry();
    const tally = new TalliedCounter({ name: 'guarded_total', help: 'h', labelNames: ['kind'] as const, registers: [registry] }).tally({ kind: 'a' });
    expect(() => tally.inc(-1)).toThrow(TypeError);
    expect(() => tally.inc(Number.NaN)).toThrow(TypeError);
    expect(() => tally.inc(Infinity)).toThrow(TypeError);
    tally.inc(2);
    expect(await registry.metrics()).toContain('guarded_total{kind="a"} 2');
  });
});
