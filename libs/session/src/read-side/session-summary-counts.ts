import type Database from 'better-sqlite3';
import { recordedDecisionSummarizer, type CompleteSummarizerUsage } from '../decider/summarizer-spend';
import type { SummarizerIdentity } from '../events/session-stream-events';

/** The outcomes of `compactions` rows the session summary counts, and the `sessions` column of each. */
const OUTCOME_COLUMNS: Readonly<Record<string, string>> = {
  compacted: 'compaction_count',
  failed: 'failed_compaction_count',
  noop: 'noop_compaction_count',
};

/** The usage figures a session's summarizer totals add up, in the order of {@link SUMMARIZER_SPEND_COLUMNS}' groups. */
const SPEND_FIGURES = ['calls', 'promptTokens', 'completionTokens', 'retries', 'unreportedUsageCalls'] as const;

/**
 * The `sessions` columns of the session's summarizer totals (read model version 18): every figure
 * of {@link SPEND_FIGURES} summed over the session's recorded decisions (`summarizer_*`), and the
 * part of them spent on discarded replies (`summarizer_discarded_*`).
 */
export const SUMMARIZER_SPEND_COLUMNS = {
  total: {
    calls: 'summarizer_calls',
    promptTokens: 'summarizer_prompt_tokens',
    completionTokens: 'summarizer_completion_tokens',
    retries: 'summarizer_retries',
    unreportedUsageCalls: 'summarizer_unreported_usage_calls',
  },
  discarded: {
    calls: 'summarizer_discarded_calls',
    promptTokens: 'summarizer_discarded_prompt_tokens',
    completionTokens: 'summarizer_discarded_completion_tokens',
    retries: 'summarizer_discarded_retries',
    unreportedUsageCalls: 'summarizer_discarded_unreported_usage_calls',
  },
} as const satisfies Record<'total' | 'discarded', Record<(typeof SPEND_FIGURES)[number], string>>;

/** Every column of {@link SUMMARIZER_SPEND_COLUMNS}, totals first, in {@link SPEND_FIGURES} order. */
const SPEND_COLUMN_LIST: readonly string[] = [
  ...SPEND_FIGURES.map((f) => SUMMARIZER_SPEND_COLUMNS.total[f]),
  ...SPEND_FIGURES.map((f) => SUMMARIZER_SPEND_COLUMNS.discarded[f]),
];

/** The `CREATE TABLE sessions` column definitions of {@link SUMMARIZER_SPEND_COLUMNS}. */
export const SUMMARIZER_SPEND_DDL = SPEND_COLUMN_LIST.map((c) => `${c} INTEGER NOT NULL DEFAULT 0`).join(',\n  ');

/**
 * The amounts a recorded decision adds to {@link SPEND_COLUMN_LIST} (`sign` 1) or takes back from
 * them (`sign` -1, a row replaced): its summarizer's figures as every reader reads them
 * (`recordedDecisionSummarizer`), then those of its `discarded` part (0 when none); null (nothing) for
 * a decision without a summarizer or of the extractive one, which calls no endpoint. Pure.
 */
export function decisionSpendAmounts(
  decision: { summarizer?: SummarizerIdentity },
  summary: { summarizer?: SummarizerIdentity } | null,
  sign: 1 | -1,
): number[] | null {
  const spent = recordedDecisionSummarizer(decision, summary);
  // The extractive summarizer calls no endpoint: its passes spend nothing (they counted 1 call each before read models 25,
  // so a session's calls did not match the provider's count: newcomer ncui69 F4).
  if (!spent || spent.kind === 'extractive') return null;
  const of = (u: CompleteSummarizerUsage | undefined) => SPEND_FIGURES.map((f) => sign * (u ? u[f] : 0));
  return [...of(spent), ...of(spent.discarded)];
}

/**
 * Keeps the counts of the session summary on the session's `sessions` row (see
 * `./read-model-schema`, versions 12 and 18) as the projector writes the rows they count, so a
 * summary reads them in O(1) instead of counting the session's history:
 * - `event_count`: conversation events (`ConversationEventAppended` rows of `session_log`),
 *   counted by the writer's own update of the row as it applies each event (one statement);
 * - `compaction_count`, `failed_compaction_count`, `noop_compaction_count`: `compactions` rows
 *   by outcome (`compacted`, `failed`, `noop`);
 * - the summarizer totals ({@link SUMMARIZER_SPEND_COLUMNS}): the `summarizer` figures of every
 *   `compactions` row, its `discarded` part apart (a projection of the decisions: the calls of a
 *   pass that recorded no decision are not in the log, only in the answer and `/metrics`).
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
      replacedOf: db.prepare('SELECT outcome, data_json AS dataJson, summary_json AS summaryJson FROM compactions WHERE session_key = ? AND compaction_id = ?'),
      adjust,
      spend: db.prepare(`UPDATE sessions SET ${SPEND_COLUMN_LIST.map((c) => `${c} = ${c} + ?`).join(', ')} WHERE session_key = ?`),
    };
  }

  /**
   * Call before the `compactions` row of `compactionId` is written (inserted or replaced) with
   * `outcome` and its decision (`CompactionCompleted` / `CompactionFailed` data, with the
   * compaction's `SummaryInserted` data or null): moves the session's count from the replaced
   * row's outcome, if any, to `outcome` (outcomes other than `compacted`, `failed` and `noop` are
   * not counted), and its summarizer totals from the replaced row's figures to the decision's.
   */
  compactionRecorded(
    sessionKey: string,
    compactionId: string,
    outcome: string,
    decision: { summarizer?: SummarizerIdentity },
    summary: { summarizer?: SummarizerIdentity } | null,
  ): void {
    const replaced = this.stmts.replacedOf.get(sessionKey, compactionId) as { outcome: string; dataJson: string; summaryJson: string | null } | undefined;
    if (replaced?.outcome !== outcome) {
      if (replaced !== undefined && Object.hasOwn(OUTCOME_COLUMNS, replaced.outcome)) this.stmts.adjust[replaced.outcome].run(-1, sessionKey);
      if (Object.hasOwn(OUTCOME_COLUMNS, outcome)) this.stmts.adjust[outcome].run(1, sessionKey);
    }
    type Recorded = { summarizer?: SummarizerIdentity };
    const taken =
      replaced &&
      decisionSpendAmounts(JSON.parse(replaced.dataJson) as Recorded, replaced.summaryJson ? (JSON.parse(replaced.summaryJson) as Recorded) : null, -1);
    if (taken) this.stmts.spend.run(...taken, sessionKey);
    const added = decisionSpendAmounts(decision, summary, 1);
    if (added) this.stmts.spend.run(...added, sessionKey);
  }
}
