/**
 * Rebase of a compaction pass onto a newer state (DESIGN §4): when the stream moved on between
 * planning and appending, the same decision is appended at the new revision without a second
 * summarizer call, if it still holds.
 */
import { classifyEvents, pairToolCalls, type CompactionPlan } from '@lib/compaction';
import { costedWindow, orderedWindow, windowTokens, type SessionWindowState } from '../domain/session-window';
import type { EstimatorName } from '../events/session-stream-events';
import type { PlannedCompaction } from './compaction-decider';

/**
 * Re-checks `pass`, planned (or last rebased) on `before`, against `latest`. It still holds when:
 * no other compaction was decided in between; every archived id and the summary's anchor are
 * still active; and no answer appended since answers a call the pass archives (it would be kept
 * without its call, DESIGN §3.3 rule 3; pairing per `pairToolCalls`). A system message appended
 * since does not undo it (newcomer report nclongrun F1: an agent that appends one while a summary
 * is written had its summary thrown away, the model called again, and with one every few seconds
 * no pass ever landed): the pass archives what every pass archives on `latest`, its superseded
 * system messages (DESIGN §3.2), the one pinned before among them, and `latest`'s pinned one is
 * kept. Returns the pass rewritten for `latest` (events appended since are kept, the newly
 * superseded system messages archived; `activeIds`, `keptIds`, `archivedIds`,
 * `supersededSystemIds`, `tokensBefore`, `tokensArchived` and `tokensSuperseded` recomputed in
 * `estimator` units; id, base revision and summary request unchanged), or null: then the pass must
 * be planned again (always for a `noop` pass: it costs no summarizer call).
 */
export function rebaseCompaction(
  pass: PlannedCompaction,
  before: SessionWindowState,
  latest: SessionWindowState,
  estimator: EstimatorName,
): PlannedCompaction | null {
  const { plan } = pass;
  // A recorded noop is planned again: on a newer window it may archive something, or have to wait.
  if (plan.outcome !== 'compacted') return null;
  if ((before.lastCompaction?.compactionId ?? null) !== (latest.lastCompaction?.compactionId ?? null)) return null;
  if (!plan.archivedIds.every((id) => latest.active.has(id))) return null;
  if (plan.summaryInsertBeforeId && !latest.active.has(plan.summaryInsertBeforeId)) return null;
  const window = orderedWindow(latest);
  const { calls } = pairToolCalls(window.map((e) => e.event));
  const planned = new Set(plan.archivedIds);
  for (const call of calls) {
    if (planned.has(window[call.callAt].event.id) && call.responses.some((r) => !planned.has(window[r].event.id))) return null;
  }
  // every pass archives the superseded system messages: those superseded since are added
  const costed = costedWindow(latest, estimator);
  const newlySuperseded = classifyEvents(costed).supersededSystems.filter((i) => !planned.has(costed[i].event.id));
  if (newlySuperseded.length === 0) return { ...pass, plan: { ...plan, ...partition(window, planned), tokensBefore: windowTokens(window, estimator) } };
  const added = newlySuperseded.map((i) => costed[i].event.id);
  const superseded = new Set([...plan.supersededSystemIds, ...added]);
  const addedTokens = newlySuperseded.reduce((sum, i) => sum + costed[i].tokens, 0);
  return {
    ...pass,
    plan: {
      ...plan,
      ...partition(window, new Set([...planned, ...added])),
      supersededSystemIds: window.filter((e) => superseded.has(e.event.id)).map((e) => e.event.id),
      // the newly superseded are archived as superseded system messages
      archiveReasons: {
        strategyCut: plan.archiveReasons?.strategyCut ?? [],
        turnStart: plan.archiveReasons?.turnStart ?? [],
        supersededSystem: window.filter((e) => superseded.has(e.event.id)).map((e) => e.event.id),
        replacedSummaries: plan.archiveReasons?.replacedSummaries ?? [],
      },
      tokensBefore: windowTokens(window, estimator),
      tokensArchived: plan.tokensArchived + addedTokens,
      tokensSuperseded: plan.tokensSuperseded + addedTokens,
    },
  };
}

/** `window`'s ids (log order) as the plan's `activeIds`, `archivedIds` (those in `archived`) and `keptIds` (the others). */
function partition(window: readonly { event: { id: string } }[], archived: ReadonlySet<string>): Pick<CompactionPlan, 'activeIds' | 'archivedIds' | 'keptIds'> {
  return {
    activeIds: window.map((e) => e.event.id),
    archivedIds: window.filter((e) => archived.has(e.event.id)).map((e) => e.event.id),
    keptIds: window.filter((e) => !archived.has(e.event.id)).map((e) => e.event.id),
  };
}
