/**
 * Loads a session's state from the event store.
 *
 * {@link loadSessionWindow} costs O(active window + events since the last compaction): it reads the
 * stream backwards to the last compaction decision, whose session snapshot names the revision ranges of
 * the active entries, reads those ranges, then folds the tail. {@link loadSessionWindowAt} folds
 * the log from the start up to a revision, or to the end of the atomic decision holding it (time
 * travel, DESIGN §5).
 */
import type { EventStore, RecordedEvent } from '@lib/event-store';
import {
  COMPACTION_COMPLETED,
  COMPACTION_FAILED,
  CONVERSATION_EVENT,
  SUMMARY_INSERTED,
  sessionStream,
  type SessionSnapshot,
} from '../events/session-stream-events';
import { emptySessionWindow, evolveSessionWindow, foldSessionWindow, type SessionWindowState } from '../domain/session-window';
import { AtomicDecisionTracker } from '../domain/atomic-decisions';
import { cloneSessionWindow } from '../domain/clone-session-window';
import { visitStreamUpTo } from './stream-in-pages';

/** First page size for backward reads; pages double up to {@link MAX_PAGE}, so a load reads O(events since). */
const FIRST_PAGE = 32;
const MAX_PAGE = 1024;

function snapshotOf(e: RecordedEvent): SessionSnapshot | null {
  if (e.type !== COMPACTION_COMPLETED && e.type !== COMPACTION_FAILED) return null;
  return (e.data as { checkpoint?: SessionSnapshot }).checkpoint ?? null;
}

/**
 * The current state of `sessionId`, or `null` when the stream does not exist. The state carries
 * the stream's incarnation (`EventStore.streamIncarnation`, one indexed read more).
 * Rejects with the store's errors (e.g. EventStoreUnavailableError).
 */
export async function loadSessionWindow(store: EventStore, sessionId: string): Promise<SessionWindowState | null> {
  const stream = sessionStream(sessionId);
  const tail: RecordedEvent[] = [];
  let snapshotEvent: RecordedEvent | null = null;
  let from: bigint | 'end' = 'end';
  let pageSize = FIRST_PAGE;
  for (;;) {
    const page = await store.readStream(stream, { direction: 'backwards', fromRevision: from, maxCount: pageSize });
    for (const e of page) {
      if (snapshotOf(e)) {
        snapshotEvent = e;
        break;
      }
      tail.push(e);
    }
    if (snapshotEvent || page.length < pageSize) break;
    const last = page[page.length - 1].revision;
    if (last === 0n) break;
    from = last - 1n;
    pageSize = Math.min(MAX_PAGE, pageSize * 2);
  }
  if (!snapshotEvent && tail.length === 0) return null;
  tail.reverse();
  const state = emptySessionWindow();
  if (snapshotEvent) {
    const snapshot = snapshotOf(snapshotEvent)!;
    for (const [fromRev, toRev] of snapshot.keptRanges) {
      const start = BigInt(fromRev);
      const count = Number(BigInt(toRev) - start + 1n);
      const events = await store.readStream(stream, { fromRevision: start, maxCount: count });
      for (const e of events) {
        if (e.type === CONVERSATION_EVENT || e.type === SUMMARY_INSERTED) evolveSessionWindow(state, e);
      }
    }
    state.policy = snapshot.policy;
    state.policyRevision = snapshot.policyRevision !== undefined ? BigInt(snapshot.policyRevision) : null;
    state.consecutiveFailures = snapshot.consecutiveFailures;
    if (snapshot.userId) state.userId = snapshot.userId;
    state.archivedOpenCalls = new Map((snapshot.archivedOpenCalls ?? []).map(([id, compactionId, name]) => [id, { compactionId, name }]));
    state.eventsSinceCompaction = 0;
    evolveSessionWindow(state, snapshotEvent);
  }
  const folded = foldSessionWindow(tail, state);
  // Read after the events: if the session was erased and written again meanwhile, the events are
  // the old life's and this the new one's, and the decision's expected revision (never reused) fails.
  folded.incarnation = await store.streamIncarnation(stream);
  return folded;
}

/**
 * The state of `sessionId` as it was right after revision `revision` (inclusive), folded from the
 * start of the log; `null` when the stream does not exist. A revision past the end gives the
 * current state.
 *
 * A revision inside one atomic decision (a compaction's decision events before its closing
 * `CompactionCompleted` / `CompactionFailed`; a late answer and the events after it in its append,
 * before the `EventsArchived` with `onArrival` that archives it; see {@link AtomicDecisionTracker})
 * gives the state after the whole decision: no reader ever saw the state in between (events
 * archived with no summary in their place, a tool result whose call is archived). The returned
 * state's `revision` is then the decision's last revision, past `revision`. Reads the events up to
 * `revision`, plus those of the decision after it.
 */
export async function loadSessionWindowAt(store: EventStore, sessionId: string, revision: bigint): Promise<SessionWindowState | null> {
  const stream = sessionStream(sessionId);
  // Read and folded a page at a time, giving the event loop turns (visitStreamUpTo).
  const decisions = new AtomicDecisionTracker();
  const state = emptySessionWindow();
  let first = true;
  const visited = await visitStreamUpTo(store, stream, revision, (e) => {
    // Read from the stream's start: its first event's revision is the incarnation (EventStore.streamIncarnation).
    if (first) state.incarnation = e.revision;
    first = false;
    decisions.observe(state, e);
    evolveSessionWindow(state, e);
  });
  if (visited === 0) return null;
  if (!decisions.inside) return state;
  // Inside a decision: read on to its end. A decision that never closes (a log written before late
  // answers were archived on arrival) leaves the state as it was at `revision`.
  const atRevision = cloneSessionWindow(state);
  let from = state.revision! + 1n;
  let pageSize = FIRST_PAGE;
  for (;;) {
    const page = await store.readStream(stream, { fromRevision: from, maxCount: pageSize });
    for (const e of page) {
      if (!decisions.continues(e)) return atRevision;
      decisions.observe(state, e);
      evolveSessionWindow(state, e);
      if (!decisions.inside) return state;
    }
    if (page.length < pageSize) return atRevision;
    from = page[page.length - 1].revision + 1n;
    pageSize = Math.min(MAX_PAGE, pageSize * 2);
  }
}
