import type { PathsView } from '../paths-view.js';
import { ScrollArea } from './scroll-area.js';

// Colour-blind-safe (Okabe–Ito), one per step.
const COLOURS = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#7a6f00'];
const LABEL_ROOM = 180;

/** A step's name short enough to sit beside its node; the whole name is its tooltip. */
const shortName = (name: string) => {
  const shown = name.replace(/^https?:\/\/[^/]+/, '') || name || '(none)';
  return shown.length > 26 ? `${shown.slice(0, 25)}…` : shown;
};

/**
 * The paths as a Sankey diagram in SVG, and the same edges as a table for screen readers (and for
 * tests, which read `data-edges`).
 */
export function PathsChart({ title, view }: { title: string; view: PathsView }) {
  const last = Math.max(...view.nodes.map((n) => n.step));
  const colour = (step: number) => COLOURS[(step - 1) % COLOURS.length];
  return (
    <figure class="chart paths" data-chart-type="paths" data-edges={JSON.stringify(view.links.map(({ source, target, value }) => ({ source, target, value })))}>
      <ScrollArea label={`${title}: paths diagram`}>
        <svg viewBox={`${-8} -8 ${view.width + LABEL_ROOM + 16} ${view.height + 16}`} width={view.width + LABEL_ROOM + 16} height={view.height + 16} role="img" aria-label={`${title}: paths between ${view.nodes.length} steps`}>
          {view.links.map((link) => (
            <path d={link.d} fill="none" stroke={colour(Number(link.source.split('_')[0]))} stroke-opacity={0.35} stroke-width={link.width}>
              <title>{`${link.source} → ${link.target}: ${link.value} (average ${link.averageSeconds} s)`}</title>
            </path>
          ))}
          {view.nodes.map((node) => (
            <g>
              <rect x={node.x} y={node.y} width={view.nodeWidth} height={node.height} fill={colour(node.step)}>
                <title>{`${node.step}. ${node.name || '(none)'}: ${node.value}`}</title>
              </rect>
              <text x={node.step === last && last > 1 ? node.x - 4 : node.x + view.nodeWidth + 4} y={node.y + node.height / 2} dy="0.35em" text-anchor={node.step === last && last > 1 ? 'end' : 'start'} font-size="12" fill="#111">
                {`${shortName(node.name)} (${node.value})`}
              </text>
            </g>
          ))}
        </svg>
      </ScrollArea>
      <details class="chart-data">
        <summary>Data table</summary>
        <table>
          <caption class="visually-hidden">{title}</caption>
          <thead>
            <tr>
              <th scope="col">From</th>
              <th scope="col">To</th>
              <th scope="col">Count</th>
              <th scope="col">Average time (s)</th>
            </tr>
          </thead>
          <tbody>
            {view.links.map((link) => (
              <tr>
                <td>{link.source}</td>
                <td>{link.target}</td>
                <td>{link.value}</td>
                <td>{link.averageSeconds}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
