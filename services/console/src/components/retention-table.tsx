import type { RetentionCohort } from '../insight-view.js';
import { retentionShade } from '../retention-shade.js';
import { ScrollArea } from './scroll-area.js';

/** The retention triangle: one row per cohort, shaded by the share still active; a cohort's size opens its persons. */
export function RetentionTable({ title, periods, cohorts, onCohort }: { title: string; periods: string[]; cohorts: RetentionCohort[]; onCohort?: (cohort: number) => void }) {
  return (
    <ScrollArea label={title}>
      <table class="retention" data-retention={JSON.stringify(cohorts.map((c) => c.counts))}>
        <caption class="visually-hidden">{title}</caption>
        <thead>
          <tr>
            <th scope="col">Cohort</th>
            <th scope="col">Size</th>
            {periods.map((p) => (
              <th scope="col">{p}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {cohorts.map((cohort, c) => (
            <tr>
              <th scope="row">{cohort.label}</th>
              <td>
                {onCohort ? (
                  <button type="button" class="link" aria-label={`${cohort.size}: persons of the ${cohort.label} cohort`} onClick={() => onCohort(c)}>
                    {cohort.size}
                  </button>
                ) : (
                  cohort.size
                )}
              </td>
              {cohort.percentages.map((pct, i) => (
                <td style={retentionShade(pct)} title={`${cohort.counts[i]} persons`}>
                  {pct}%
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollArea>
  );
}
