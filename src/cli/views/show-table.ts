import type { Column } from './table.js';

export type { Column };

/**
 * How a list command prints its rows: a table with a header row on a terminal (ink, table.tsx),
 * plain lines for pipes and files (stable for scripts, no header), nothing under --json (the
 * command's result is printed instead). ink is imported only for a terminal, so that the other
 * cases, and every other command, start without it.
 */
export interface TableOutput<Row> {
  columns: readonly Column<Row>[];
  rows: readonly Row[];
  /** One line per row for pipes and files. */
  plain(row: Row): string;
  /** Said instead of an empty table. */
  empty?: string;
}

export async function showTable<Row>(output: TableOutput<Row>, command: { jsonEnabled(): boolean; log(line: string): void }): Promise<void> {
  if (command.jsonEnabled()) return;
  if (output.rows.length === 0) {
    if (output.empty) command.log(output.empty);
    return;
  }
  if (!process.stdout.isTTY) {
    for (const row of output.rows) command.log(output.plain(row));
    return;
  }
  const { renderTable } = await import('./table.js');
  await renderTable(output.columns, output.rows);
}
