/**
 * The id of the summary a compaction pass writes (DESIGN §3.6): one rule, pure, used wherever a
 * pass's summary id is derived (the real pass, its dry run, its rebase onto a moved stream).
 */

/** Ids already held in a session: a finite set (only `has` is asked). */
export interface TakenIds {
  has(id: string): boolean;
}

/**
 * The id of the summary written by compaction `compactionId`: `summary-<compactionId>`, unless
 * that id is `taken` (an event the caller knows of already has it: client ids are any 1–256
 * characters, so a client may have appended it), else the first of
 * `summary-<compactionId>-2`, `summary-<compactionId>-3`, … that is not taken.
 *
 * Deterministic: the same compaction id and the same taken ids give the same summary id, on any
 * replica, so a retried or replayed decision names the same summary. Never one of `taken` (which
 * must be finite: at most `taken.size + 1` candidates are tried). Pure.
 */
export function summaryIdFor(compactionId: string, taken: TakenIds = new Set<string>()): string {
  const base = `summary-${compactionId}`;
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base}-${n}`;
    if (!taken.has(candidate)) return candidate;
  }
}
