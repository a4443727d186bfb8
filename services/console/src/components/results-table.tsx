import { ScrollArea } from './scroll-area.js';

/** Rows as the query endpoint answers them; objects (properties) shown as JSON. */
export function ResultsTable({ caption, columns, rows }: { caption: string; columns: string[]; rows: unknown[][] }) {
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
          {rows.map((row) => (
            <tr>
              {row.map((cell) => (
                <td>{cell !== null && typeof cell === 'object' ? JSON.stringify(cell) : String(cell ?? '')}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollArea>
  );
}
