import { Box, Static, Text, render } from 'ink';

/**
 * A list command's rows for a person at a terminal: a bold header row over aligned columns,
 * rendered with ink. show-table.ts decides when (a terminal, not --json) and loads this module
 * only then.
 */
export interface Column<Row> {
  header: string;
  value(row: Row): string;
}

interface TableProps<Row> {
  columns: readonly Column<Row>[];
  rows: readonly Row[];
}

const GAP = 2;

/**
 * Every line goes through <Static>: written once and left alone, so ink never redraws or clears
 * the screen, however long the table. The last column takes the rest of the terminal's width and
 * is cut with an ellipsis rather than wrapped.
 */
export function Table<Row>({ columns, rows }: TableProps<Row>) {
  const cells = rows.map((row) => columns.map((column) => column.value(row)));
  const widths = columns.map((column, i) => Math.max(column.header.length, ...cells.map((line) => line[i]!.length)) + GAP);
  const lines = [columns.map((column) => column.header), ...cells];
  const last = columns.length - 1;
  return (
    <Static items={lines}>
      {(line, index) => (
        <Box key={index}>
          {line.map((cell, i) => (
            <Box key={columns[i]!.header} {...(i < last ? { width: widths[i], flexShrink: 0 } : { flexShrink: 1 })}>
              <Text bold={index === 0} wrap="truncate-end">
                {cell}
              </Text>
            </Box>
          ))}
        </Box>
      )}
    </Static>
  );
}

/** Renders the table once, below what the terminal already shows. */
export async function renderTable<Row>(columns: readonly Column<Row>[], rows: readonly Row[], stdout: NodeJS.WriteStream = process.stdout): Promise<void> {
  const app = render(<Table columns={columns} rows={rows} />, { stdout, patchConsole: false, exitOnCtrlC: false });
  app.unmount();
  await app.waitUntilExit();
}
