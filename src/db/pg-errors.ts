/**
 * Objection wraps driver errors (UniqueViolationError, ForeignKeyViolationError…) and keeps the
 * driver's own error as `nativeError`; knex queries throw the driver's error itself. This reads the
 * Postgres error of either, so services can translate it into a contract error.
 */
export function pgErrorOf(error: unknown): { code?: string; constraint?: string } | undefined {
  const e = error as { nativeError?: unknown } | undefined;
  return (e?.nativeError ?? e) as { code?: string; constraint?: string } | undefined;
}
