import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, LineController, LineElement, PointElement, Tooltip } from 'chart.js';
import { useEffect, useRef } from 'preact/hooks';
import type { Series } from '../insight-view.js';

Chart.register(LineController, BarController, LineElement, BarElement, PointElement, CategoryScale, LinearScale, Legend, Tooltip);

// Colour-blind-safe (Okabe–Ito), dark enough to read against white.
const COLOURS = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#7a6f00', '#000000'];

interface Props {
  type: 'line' | 'bar';
  title: string;
  labels: string[];
  series: Series[];
  /** Opens the persons behind a point: the series' index and the point's. */
  onPoint?: (series: number, point: number) => void;
}

/**
 * A canvas for the eyes, and the same numbers as a table for screen readers (and for tests,
 * which also read `data-series`): a chart alone says nothing to assistive technology.
 */
export function ChartView({ type, title, labels, series, onPoint }: Props) {
  const canvas = useRef<HTMLCanvasElement>(null);
  // Read at the click, so a parent's new handler on every render does not redraw the chart.
  const point = useRef(onPoint);
  point.current = onPoint;
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, {
      type,
      data: {
        labels,
        datasets: series.map((s, i) => ({
          label: s.label,
          data: s.data,
          borderColor: COLOURS[i % COLOURS.length],
          backgroundColor: COLOURS[i % COLOURS.length],
          pointRadius: labels.length > 40 ? 0 : 2,
          tension: 0.2,
        })),
      },
      options: {
        animation: false,
        maintainAspectRatio: false,
        interaction: { mode: 'index', intersect: false },
        plugins: { legend: { display: series.length > 1, position: 'bottom' } },
        scales: { y: { beginAtZero: true } },
        onClick: (event, _elements, chart) => {
          const [hit] = chart.getElementsAtEventForMode(event as unknown as Event, 'nearest', { intersect: true }, false);
          if (hit) point.current?.(hit.datasetIndex, hit.index);
        },
      },
    });
    return () => chart.destroy();
  }, [type, labels, series]);

  return (
    <figure class="chart" data-chart-type={type} data-series={JSON.stringify(series)} data-labels={JSON.stringify(labels)}>
      <div class="chart-canvas">
        <canvas ref={canvas} role="img" aria-label={`${title}: ${type} chart`} />
      </div>
      <details class="chart-data">
        <summary>Data table</summary>
        <table>
          <caption class="visually-hidden">{title}</caption>
          <thead>
            <tr>
              <th scope="col">Series</th>
              {labels.map((label) => (
                <th scope="col">{label}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {series.map((s, i) => (
              <tr>
                <th scope="row">{s.label}</th>
                {s.data.map((value, j) => (
                  <td>
                    {/* A link's name starts with the number it shows (WCAG 2.5.3, label in name), then says what it opens. */}
                    {onPoint ? (
                      <button type="button" class="link" aria-label={`${value}: persons behind ${s.label}, ${labels[j] ?? j}`} onClick={() => onPoint(i, j)}>
                        {value}
                      </button>
                    ) : (
                      value
                    )}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
