import { RESULT_KEYS, type ImportResult, type ResultKey } from './writer.js';

/**
 * What the import's progress view shows, computed from the source's row counts (the probe), the
 * result so far and the time: one bar per entity, the rate and the time left. Pure, so the
 * terminal view (src/cli/views/import-progress.tsx) and the plain lines only draw it.
 */
interface ProgressBar {
  key: ResultKey | 'thread_entries';
  label: string;
  done: number;
  total: number;
  /** 0…1; 1 once the phase after it has started. */
  fraction: number;
}

export interface ProgressModel {
  phase: string;
  bars: ProgressBar[];
  /** Rows handled (created, skipped or failed) so far, every entity together. */
  rows: number;
  /** Rows per second since the start. */
  rate: number;
  /** Seconds left at this rate; null before the first row or when the totals are unknown. */
  etaSeconds: number | null;
  errors: number;
  elapsedSeconds: number;
}

/** The entities in import order, each with the probe's count that is its total. */
const ENTITIES: Array<{ key: ProgressBar['key']; label: string; phase: string; total: string; of: ResultKey[] }> = [
  { key: 'teams', label: 'teams', phase: 'teams', total: 'teams', of: ['teams'] },
  { key: 'agents', label: 'agents', phase: 'agents', total: 'agents', of: ['agents'] },
  { key: 'organizations', label: 'organizations', phase: 'organizations', total: 'organizations', of: ['organizations'] },
  { key: 'customers', label: 'customers', phase: 'customers', total: 'customers', of: ['customers'] },
  { key: 'ticket_types', label: 'ticket types', phase: 'ticket_types', total: 'ticket_types', of: ['ticket_types'] },
  { key: 'tickets', label: 'tickets', phase: 'tickets', total: 'tickets', of: ['tickets'] },
  { key: 'thread_entries', label: 'thread entries', phase: 'messages', total: 'thread_entries', of: ['messages', 'notes'] },
  { key: 'attachments', label: 'attachments', phase: 'attachments', total: 'attachments', of: ['attachments'] },
];

const PHASES = [...ENTITIES.map((e) => e.phase), 'collaborators'];

export function progressModel(totals: Record<string, number>, phase: string, result: ImportResult, elapsedMs: number): ProgressModel {
  // `done`: the import has ended, every bar is full.
  const current = phase === 'done' ? PHASES.length : PHASES.indexOf(phase);
  const bars = ENTITIES.map((e): ProgressBar => {
    const done = e.of.reduce((n, k) => n + result.counts[k] + result.skipped[k], 0);
    const total = Math.max(totals[e.total] ?? 0, done);
    const finished = current > PHASES.indexOf(e.phase);
    return { key: e.key, label: e.label, done, total, fraction: finished || total === 0 ? (finished ? 1 : 0) : Math.min(1, done / total) };
  });
  const rows = RESULT_KEYS.reduce((n, k) => n + result.counts[k] + result.skipped[k], 0) + result.errors.length;
  const all = bars.reduce((n, b) => n + b.total, 0);
  const seconds = Math.max(0.001, elapsedMs / 1000);
  const rate = rows / seconds;
  const left = Math.max(0, all - bars.reduce((n, b) => n + b.done, 0));
  return {
    phase, bars, rows, rate, errors: result.errors.length, elapsedSeconds: elapsedMs / 1000,
    etaSeconds: rows > 0 && all > 0 ? left / rate : null,
  };
}

/** `[#####.....]` of `width` cells. */
export function bar(fraction: number, width = 24): string {
  const full = Math.round(Math.max(0, Math.min(1, fraction)) * width);
  return `[${'#'.repeat(full)}${'.'.repeat(width - full)}]`;
}

/** `1h02m`, `3m05s`, `42s`; `--` when unknown. */
export function duration(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return '--';
  const s = Math.round(seconds);
  if (s >= 3600) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${s}s`;
}

/** The one-line form (pipes, files, logs). */
export function progressLine(model: ProgressModel): string {
  const active = model.bars.find((b) => b.label.replace(' ', '_') === model.phase || (model.phase === 'messages' && b.key === 'thread_entries'));
  const where = active ? `${active.label} ${active.done}/${active.total}` : model.phase;
  return `${where}, ${model.rows} rows, ${model.rate.toFixed(0)} rows/s, ${model.errors} errors, ETA ${duration(model.etaSeconds)}`;
}
