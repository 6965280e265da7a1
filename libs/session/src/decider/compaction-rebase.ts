/**
 * Rebase of a compaction pass onto a newer state (DESIGN §4): when the stream moved on between
 * planning and appending, the same decision is appended at the new revision without a second
 * summarizer call, if it still holds.
 */
import { classifyEvents, pairToolCalls } from '@lib/compaction';
import { costedWindow, orderedWindow, windowTokens, type SessionWindowState } from '../domain/session-window';
import type { EstimatorName } from '../events/session-stream-events';
import type { PlannedCompaction } from './compaction-decider';

/** Id of the pinned system message of `state`'s window (DESIGN §3.2, per `classifyEvents`), or null. */
function pinnedSystemId(state: SessionWindowState, estimator: EstimatorName): string | null {
  const window = costedWindow(state, estimator);
  const { pinnedSystem } = classifyEvents(window);
  return pinnedSystem >= 0 ? window[pinnedSystem].event.id : null;
}

/**
 * Re-checks `pass`, planned (or last rebased) on `before`, against `latest`. It still holds when:
 * no other compaction was decided in between; every archived id and the summary's anchor are
 * still active; the pinned system message is the same (a system message appended since would
 * supersede it, which the pass does not say); and no answer appended since answers a call the
 * pass archives (it would be kept without its call, DESIGN §3.3 rule 3; pairing per
 * `pairToolCalls`). Returns the pass rewritten for `latest` (events appended since are kept,
 * `activeIds` and `tokensBefore` recomputed in `estimator` units; id and base revision unchanged), or null: then
 * the pass must be planned again (always for a `noop` pass: it costs no summarizer call).
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
  if (pinnedSystemId(latest, estimator) !== pinnedSystemId(before, estimator)) return null;
  const archived = new Set(plan.archivedIds);
  const window = orderedWindow(latest);
  const { calls } = pairToolCalls(window.map((e) => e.event));
  for (const call of calls) {
    if (archived.has(window[call.callAt].event.id) && call.responses.some((r) => !archived.has(window[r].event.id))) return null;
  }
  return {
    ...pass,
    plan: {
      ...plan,
      activeIds: window.map((e) => e.event.id),
      keptIds: window.filter((e) => !archived.has(e.event.id)).map((e) => e.event.id),
      tokensBefore: windowTokens(window, estimator),
    },
  };
}
