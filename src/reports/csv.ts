import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { Ctx } from '../core/context.js';
import type { Filters } from './filters.js';
import { prepareRun, type Cell, type RunInput } from './catalog.js';

/**
 * The CSV form of a run: a header row, then the rows as they are read, page by page, through
 * csv-stringify. Nothing holds the whole result: the per-ticket export reads 5,000 tickets at a
 * time as the client takes them (backpressure of the response). The first page is read before
 * answering, so a failing query is an error answer rather than a cut-off file. Cells that a
 * spreadsheet would run as a formula (=, +, -, @ first) are quoted with a leading apostrophe.
 */
export async function runCsv(ctx: Ctx, f: Filters, input: RunInput): Promise<{ filename: string; body: Readable }> {
  const run = prepareRun(ctx, f, input);
  const pages = run.pages();
  const first = await pages.next();
  async function* rows(): AsyncGenerator<Cell[]> {
    if (first.done) return;
    yield* first.value;
    for await (const page of pages) yield* page;
  }
  const csv = stringify({ header: true, columns: run.columns, escape_formulas: true, cast: { number: (n) => String(n) } });
  const source = Readable.from(rows());
  source.on('error', (error) => csv.destroy(error));
  source.pipe(csv);
  const day = (d: Date) => d.toISOString().slice(0, 10);
  return { filename: `${run.report}-by-${run.group_by}-${day(f.from)}-${day(f.to)}.csv`, body: csv };
}
