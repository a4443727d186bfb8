import { insightView, type InsightSource } from '../insight-view.js';
import { ChartView } from './chart.js';
import { PathsChart } from './paths-chart.js';
import { ResultsTable } from './results-table.js';
import { RetentionTable } from './retention-table.js';

/** One insight's results drawn the way its kind is read: lines, bars, a table, a triangle or a Sankey diagram. */
export function InsightResult({ title, source, results }: { title: string; source: InsightSource; results: unknown }) {
  const view = insightView(source, results);
  switch (view.type) {
    case 'line':
    case 'bar':
      return <ChartView type={view.type} title={title} labels={view.labels} series={view.series} />;
    case 'table':
      return <ResultsTable caption={title} columns={view.columns} rows={view.rows} />;
    case 'retention':
      return <RetentionTable title={title} periods={view.periods} cohorts={view.cohorts} />;
    case 'paths':
      return <PathsChart title={title} view={view} />;
    case 'empty':
      return <p class="muted">No data in this period yet.</p>;
    case 'unsupported':
      return <p class="muted">The console does not draw {view.kind} insights yet; the API answers them at /query/.</p>;
  }
}
