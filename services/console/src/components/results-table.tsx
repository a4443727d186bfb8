import { ScrollArea } from './scroll-area.js';

/** Rows as the query endpoint answers them; objects (properties) shown as JSON. `onRow` makes a row's first cell open it. */
export function ResultsTable({ caption, columns, rows, onRow }: { caption: string; columns: string[]; rows: unknown[][]; onRow?: (row: number) => void }) {
  return (
    <ScrollArea label={caption}>
      <table class="results">
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th scope="col">{c}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, r) => (
            <tr>
              {row.map((cell, c) => {
                const text = cell !== null && typeof cell === 'object' ? JSON.stringify(cell) : String(cell ?? '');
                return (
                  <td>
                    {onRow && c === row.length - 1 ? (
                      <button type="button" class="link" aria-label={`${text}: persons behind ${String(row[0])}`} onClick={() => onRow(r)}>
                        {text}
                      </button>
                    ) : (
                      text
                    )}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollArea>
  );
}
