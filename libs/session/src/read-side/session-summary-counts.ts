import type Database from 'better-sqlite3';

/** The outcomes of `compactions` rows the session summary counts, and the `sessions` column of each. */
const OUTCOME_COLUMNS: Readonly<Record<string, string>> = {
  compacted: 'compaction_count',
  failed: 'failed_compaction_count',
  noop: 'noop_compaction_count',
};

/**
 * Keeps the counts of the session summary on the session's `sessions` row (see
 * `./read-model-schema`, version 12) as the projector writes the rows they count, so a summary
 * reads them in O(1) instead of counting the session's history:
 * - `event_count`: conversation events (`ConversationEventAppended` rows of `session_log`),
 *   counted by the writer's own update of the row as it applies each event (one statement);
 * - `compaction_count`, `failed_compaction_count`, `noop_compaction_count`: `compactions` rows
 *   by outcome (`compacted`, `failed`, `noop`).
 *
 * Only writes (the caller's transaction): no count is ever recomputed. An erasure needs no call:
 * it deletes the `sessions` row with the rows counted, and the events applied again after it
 * count again.
 */
export class SessionSummaryCounts {
  private readonly stmts;

  constructor(db: Database.Database) {
    const adjust = Object.fromEntries(
      Object.entries(OUTCOME_COLUMNS).map(([outcome, column]) => [outcome, db.prepare(`UPDATE sessions SET ${column} = ${column} + ? WHERE session_key = ?`)]),
    ) as Record<string, Database.Statement>;
    this.stmts = {
      outcomeOf: db.prepare('SELECT outcome FROM compactions WHERE session_key = ? AND compaction_id = ?').pluck(),
      adjust,
    };
  }

  /**
   * Call before the `compactions` row of `compactionId` is written (inserted or replaced) with
   * `outcome`: moves the session's count from the replaced row's outcome, if any, to `outcome`.
   * Outcomes other than `compacted`, `failed` and `noop` are not counted.
   */
  compactionRecorded(sessionKey: string, compactionId: string, outcome: string): void {
    const replaced = this.stmts.outcomeOf.get(sessionKey, compactionId) as string | undefined;
    if (replaced === outcome) return;
    if (replaced !== undefined && Object.hasOwn(OUTCOME_COLUMNS, replaced)) this.stmts.adjust[replaced].run(-1, sessionKey);
    if (Object.hasOwn(OUTCOME_COLUMNS, outcome)) this.stmts.adjust[outcome].run(1, sessionKey);
  }
}
