/**
 * A paths insight's edges (PostHog's `{source, target, value, average_conversion_time}`, nodes
 * named `<step>_<name>`) laid out as a Sankey diagram: one column per step, each node as tall as
 * the persons passing through it, each edge a band as wide as its count from its source's right
 * side to its target's left side. Pure, so the layout is tested without a browser.
 */
export interface PathEdge {
  source: string;
  target: string;
  value: number;
  average_conversion_time?: number;
}

export interface PathNode {
  id: string;
  step: number;
  name: string;
  value: number;
  x: number;
  y: number;
  height: number;
}

export interface PathLink {
  source: string;
  target: string;
  value: number;
  /** Seconds, as shown; PostHog answers milliseconds. */
  averageSeconds: number;
  /** The band's centre line, an SVG path from the source's side to the target's. */
  d: string;
  width: number;
}

export interface PathsView {
  type: 'paths';
  width: number;
  height: number;
  nodeWidth: number;
  nodes: PathNode[];
  links: PathLink[];
}

const WIDTH = 960;
const HEIGHT = 420;
const NODE_WIDTH = 12;
const GAP = 14;

function parseNode(id: string): { step: number; name: string } {
  const at = id.indexOf('_');
  const step = Number(id.slice(0, at));
  return Number.isInteger(step) && step > 0 ? { step, name: id.slice(at + 1) } : { step: 1, name: id };
}

export function pathsView(results: unknown[]): PathsView {
  const edges = (results as PathEdge[]).filter((e) => typeof e?.source === 'string' && typeof e.target === 'string' && Number(e.value) > 0);
  const inflow = new Map<string, number>();
  const outflow = new Map<string, number>();
  for (const e of edges) {
    outflow.set(e.source, (outflow.get(e.source) ?? 0) + e.value);
    inflow.set(e.target, (inflow.get(e.target) ?? 0) + e.value);
  }
  const ids = [...new Set(edges.flatMap((e) => [e.source, e.target]))];
  const value = (id: string) => Math.max(inflow.get(id) ?? 0, outflow.get(id) ?? 0);
  const columns = new Map<number, string[]>();
  for (const id of ids) {
    const { step } = parseNode(id);
    columns.set(step, [...(columns.get(step) ?? []), id]);
  }
  const steps = [...columns.keys()].sort((a, b) => a - b);
  // One scale for every column, so a band is as wide at both of its ends.
  const tallest = Math.max(1, ...steps.map((s) => columns.get(s)!.length));
  const busiest = Math.max(1, ...steps.map((s) => columns.get(s)!.reduce((sum, id) => sum + value(id), 0)));
  const scale = (HEIGHT - GAP * (tallest - 1)) / busiest;
  const spacing = steps.length > 1 ? (WIDTH - NODE_WIDTH) / (steps.length - 1) : 0;

  const nodes = new Map<string, PathNode>();
  steps.forEach((step, column) => {
    let y = 0;
    for (const id of columns.get(step)!.sort((a, b) => value(b) - value(a) || (a < b ? -1 : 1))) {
      const height = Math.max(1, value(id) * scale);
      nodes.set(id, { id, step, name: parseNode(id).name, value: value(id), x: column * spacing, y, height });
      y += height + GAP;
    }
  });

  // Each node's bands stack from its top, the heaviest first, on both sides.
  const outUsed = new Map<string, number>();
  const inUsed = new Map<string, number>();
  const links = [...edges]
    .sort((a, b) => b.value - a.value)
    .map((e): PathLink => {
      const from = nodes.get(e.source)!;
      const to = nodes.get(e.target)!;
      const width = Math.max(1, e.value * scale);
      const y0 = from.y + (outUsed.get(e.source) ?? 0) + width / 2;
      const y1 = to.y + (inUsed.get(e.target) ?? 0) + width / 2;
      outUsed.set(e.source, (outUsed.get(e.source) ?? 0) + width);
      inUsed.set(e.target, (inUsed.get(e.target) ?? 0) + width);
      const x0 = from.x + NODE_WIDTH;
      const x1 = to.x;
      const mid = (x0 + x1) / 2;
      const r = (n: number) => Math.round(n * 10) / 10;
      return { source: e.source, target: e.target, value: e.value, averageSeconds: Math.round((e.average_conversion_time ?? 0) / 100) / 10, d: `M${r(x0)},${r(y0)} C${r(mid)},${r(y0)} ${r(mid)},${r(y1)} ${r(x1)},${r(y1)}`, width: r(width) };
    });
  const bottom = Math.max(0, ...[...nodes.values()].map((n) => n.y + n.height));
  return { type: 'paths', width: WIDTH, height: Math.ceil(bottom), nodeWidth: NODE_WIDTH, nodes: [...nodes.values()], links };
}
