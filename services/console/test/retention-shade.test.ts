import { retentionShade } from '../src/retention-shade.js';

const rgbOf = (css: string): number[] => {
  if (css === '#000') return [0, 0, 0];
  if (css === '#fff') return [255, 255, 255];
  const m = /^rgb\((\d+), (\d+), (\d+)\)$/.exec(css);
  if (!m) throw new Error(`not a colour: ${css}`);
  return m.slice(1).map(Number);
};

// WCAG 2.x relative luminance and contrast ratio, written out here so the test does not trust the module's own.
const relativeLuminance = (css: string): number => {
  const linear = rgbOf(css).map((v) => {
    const s = v / 255;
    return s <= 0.03928 ? s / 12.92 : Math.pow((s + 0.055) / 1.055, 2.4);
  });
  return [0.2126, 0.7152, 0.0722].reduce((sum, weight, i) => sum + weight * linear[i]!, 0);
};
const contrast = (a: string, b: string): number => {
  const [la, lb] = [relativeLuminance(a), relativeLuminance(b)];
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
};

describe('retention cells keep their text readable at every share', () => {
  it.each(Array.from({ length: 101 }, (_, p) => p))('%i%% has a contrast of at least 4.5:1', (pct) => {
    const { background, color } = retentionShade(pct);
    expect(contrast(background, color)).toBeGreaterThanOrEqual(4.5);
  });

  it('goes from white at 0% to the accent at 100%, darker as the share grows', () => {
    expect(retentionShade(0).background).toBe('rgb(255, 255, 255)');
    expect(retentionShade(100).background).toBe('rgb(0, 114, 178)');
    const l = [0, 25, 50, 75, 100].map((p) => relativeLuminance(retentionShade(p).background));
    expect(l).toEqual([...l].sort((a, b) => b - a));
  });

  it('clamps shares outside 0-100 instead of drawing an invalid colour', () => {
    expect(retentionShade(-5)).toEqual(retentionShade(0));
    expect(retentionShade(140)).toEqual(retentionShade(100));
  });
});
