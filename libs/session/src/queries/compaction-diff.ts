import type { SessionEventType } from '@lib/compaction';
import type { EstimatorName } from '../events/session-stream-events';
import type { WindowEntry } from '../domain/session-window';
import { eventPreview } from '../domain/event-preview';
import { mapInTurns } from '../event-loop-turns';
import type { ArchivedOnArrivalItem } from '../read-side/queries/compaction-history-item';

/** One event of a window in a {@link CompactionDiff}. */
export interface DiffEntry {
  id: string;
  type: SessionEventType;
  /** Stream revision (decimal string) of the event. */
  revision: string;
  /** Cost under the compaction's estimator. */
  tokens: number;
  /** In `before`: `archived` (left the window) or `kept`; in `after`: `added` (came in) or `kept`. */
  change: 'archived' | 'kept' | 'added';
  /** The first characters of its text, tool calls or tool data (see `eventPreview`). */
  preview: string;
}

/** One side of a {@link CompactionDiff}: the window right after `revision`. */
export interface DiffWindow {
  /** Stream revision (decimal string) the window is folded to. */
  revision: string;
  tokens: number;
  events: DiffEntry[];
}

/**
 * The active window just before a compaction's first decision event and just after its last,
 * folded from the log (time travel), in window order, tokens in the compaction's estimator.
 */
export interface CompactionDiff {
  sessionId: string;
  compactionId: string;
  estimator: EstimatorName;
  /**
   * ISO-8601 UTC time (milliseconds) the store recorded the decision's last event (the history
   * item's `recordedAt`): `…/window?atTime=<recordedAt>` answers `after`'s window (unless an event
   * after the decision was recorded in the same millisecond).
   */
  recordedAt: string;
  before: DiffWindow;
  after: DiffWindow;
  /** Ids in `before` and not in `after`, window order. */
  archivedIds: string[];
  /** Ids in `after` and not in `before` (the summary), window order. */
  addedIds: string[];
  /**
   * Events archived on arrival attributed to the compaction, after it (late answers to calls it
   * archived; see `CompactionHistoryItem.archivedOnArrival`): never in a window, so in neither side.
   */
  archivedOnArrival: ArchivedOnArrivalItem[];
}

/**
 * Compares two ordered windows (see {@link CompactionDiff}). Revisions are bigint. `archivedOnArrival`
 * (the compaction's late answers archived on arrival, default none) is passed through. Each side's
 * entries are mapped giving the event loop a turn every `ITEMS_PER_TURN` entries (`mapInTurns`): a
 * preview of each of 2 × 30,000 entries held the loop 100–250 ms of CPU in one stretch (newcomer ncnoisy F1);
 * so are the ids each side is compared by.
 * The windows must not change meanwhile (the caller's own folds).
 */
export async function diffWindows(
  head: { sessionId: string; compactionId: string; estimator: EstimatorName; recordedAt: string },
  before: { revision: bigint; entries: WindowEntry[] },
  after: { revision: bigint; entries: WindowEntry[] },
  archivedOnArrival: ArchivedOnArrivalItem[] = [],
): Promise<CompactionDiff> {
  // The ids read giving the event loop turns too (30,000 entries each side).
  const afterIds = new Set(await mapInTurns(after.entries, (e) => e.event.id));
  const beforeIds = new Set(await mapInTurns(before.entries, (e) => e.event.id));
  const side = async (window: { revision: bigint; entries: WindowEntry[] }, changed: (id: string) => DiffEntry['change']): Promise<DiffWindow> => {
    const events = await mapInTurns(window.entries, (e) => ({
      id: e.event.id,
      type: e.event.type,
      revision: e.revision.toString(),
      tokens: e.costs[head.estimator],
      change: changed(e.event.id),
      preview: eventPreview(e.event),
    }));
    return { revision: window.revision.toString(), tokens: events.reduce((sum, e) => sum + e.tokens, 0), events };
  };
  const beforeSide = await side(before, (id) => (afterIds.has(id) ? 'kept' : 'archived'));
  const afterSide = await side(after, (id) => (beforeIds.has(id) ? 'kept' : 'added'));
  return {
    ...head,
    before: beforeSide,
    after: afterSide,
    archivedIds: beforeSide.events.filter((e) => e.change === 'archived').map((e) => e.id),
    addedIds: afterSide.events.filter((e) => e.change === 'added').map((e) => e.id),
    archivedOnArrival,
  };
}
