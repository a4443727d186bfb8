import { useState } from 'preact/hooks';
import { actorsQueryOf } from '../actors-view.js';
import { insightView, type InsightSource } from '../insight-view.js';
import { ActorsList } from './actors-list.js';
import { ChartView } from './chart.js';
import { PathsChart } from './paths-chart.js';
import { ResultsTable } from './results-table.js';
import { RetentionTable } from './retention-table.js';

/**
 * One insight's results drawn the way its kind is read: lines, bars, a table, a triangle or a
 * Sankey diagram; a point or cell opens the list of the persons behind it.
 */
export function InsightResult({ title, source, results }: { title: string; source: InsightSource; results: unknown }) {
  const [actors, setActors] = useState<object | null>(null);
  const open = (series: number, point: number) => setActors(actorsQueryOf(source, results, series, point));
  return (
    <>
      <InsightDrawing title={title} source={source} results={results} onPoint={open} />
      {actors && <ActorsList query={actors} onClose={() => setActors(null)} />}
    </>
  );
}

function InsightDrawing({ title, source, results, onPoint }: { title: string; source: InsightSource; results: unknown; onPoint: (series: number, point: number) => void }) {
  const view = insightView(source, results);
  switch (view.type) {
    case 'line':
    case 'bar':
      return <ChartView type={view.type} title={title} labels={view.labels} series={view.series} onPoint={onPoint} />;
    case 'table':
      return <ResultsTable caption={title} columns={view.columns} rows={view.rows} onRow={(row) => onPoint(0, row)} />;
    case 'retention':
      return <RetentionTable title={title} periods={view.periods} cohorts={view.cohorts} onCohort={(cohort) => onPoint(cohort, 0)} />;
    case 'paths':
      return <PathsChart title={title} view={view} />;
    case 'empty':
      return <p class="muted">No data in this period yet.</p>;
    case 'unsupported':
      return <p class="muted">The console does not draw {view.kind} insights yet; the API answers them at /query/.</p>;
  }
}
