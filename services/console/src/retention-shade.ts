/** The retention triangle's cell colours: the accent blended over white by the share still active. */

const ACCENT: [number, number, number] = [0, 114, 178];

const channel = (c: number): number => {
  const s = c / 255;
  return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
};

const luminance = ([r, g, b]: [number, number, number]): number => 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);

export function retentionShade(percentage: number): { background: string; color: string } {
  const share = Math.min(Math.max(percentage, 0), 100) / 100;
  const rgb = ACCENT.map((c) => Math.round(255 + (c - 255) * share)) as [number, number, number];
  const l = luminance(rgb);
  // Black or white, whichever contrasts more: one of the two always reaches 4.58:1 (WCAG AA asks 4.5),
  // which a fixed switch at 50% did not (white on the 51-75% shades fell to about 2:1).
  const color = (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? '#000' : '#fff';
  return { background: `rgb(${rgb.join(', ')})`, color };
}
