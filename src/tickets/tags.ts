/**
 * Ticket tags are compared case-insensitively, so they are stored trimmed, lowercased and once
 * each, in the order first given.
 */
export function normaliseTags(tags: readonly string[]): string[] {
  return [...new Set(tags.map((t) => t.trim().toLowerCase()).filter(Boolean))];
}
