/**
 * Loads a session's state from the event store, in O(active window + events since the last
 * compaction) (DESIGN §4), at its end or at any revision (time travel, DESIGN §5): one rule,
 * {@link foldSessionUpTo}. It reads the stream backwards from the revision asked to the last
 * compaction decision at or before it, whose session snapshot names the revision ranges of the
 * window's entries right after that decision, reads those ranges, then folds the events after the
 * decision up to the revision. A fold of the whole log from revision 0 gives the same window (the
 * snapshot is the state that fold reaches at the decision).
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
import { emptySessionWindow, evolveSessionWindow, type SessionWindowState, type StreamEvent } from '../domain/session-window';
import { AtomicDecisionTracker } from '../domain/atomic-decisions';
import { cloneSessionWindow } from '../domain/clone-session-window';
import { nextTurn } from '../event-loop-turns';
import { STREAM_PAGE, visitStreamUpTo } from './stream-in-pages';

/** First page size for backward reads; pages double up to {@link MAX_PAGE}, so a load reads O(events since). */
const FIRST_PAGE = 32;
const MAX_PAGE = 1024;

function snapshotOf(e: RecordedEvent): SessionSnapshot | null {
  if (e.type !== COMPACTION_COMPLETED && e.type !== COMPACTION_FAILED) return null;
  return (e.data as { checkpoint?: SessionSnapshot }).checkpoint ?? null;
}

/**
 * The state of the session stream `stream` right after revision `upTo` (bigint, inclusive; `'end'`:
 * its last event; a revision past the end: the same), or `null` when the stream holds no event at
 * or before it (none at all, or `upTo` before the first revision of its current life: a session
 * written again after an erasure continues after the erased revisions). Starts from the last
 * compaction decision at or before `upTo` carrying a session snapshot (`CompactionCompleted` /
 * `CompactionFailed` data `checkpoint`; without one, from the stream's start): its `keptRanges` are
 * read and their conversation events and summaries folded, its policy, failures, owner and open
 * calls archived with their turn restored, the decision event itself folded; then the events after
 * it up to `upTo` are folded in revision order, `observe` (when given) called with each *before*
 * it is folded. Reads O(window after that decision + events since it); gives the event loop a
 * turn after every {@link STREAM_PAGE} events read or folded. The state's `incarnation` is left
 * 0n (callers that need it read it). Rejects with the store's errors.
 */
export async function foldSessionUpTo(
  store: EventStore,
  stream: string,
  upTo: bigint | 'end',
  observe?: (state: SessionWindowState, event: StreamEvent) => void,
): Promise<SessionWindowState | null> {
  const { decision, tail } = await readBackToDecision(store, stream, upTo);
  if (!decision && tail.length === 0) return null;
  const state = decision ? await stateAfterDecision(store, stream, decision, snapshotOf(decision)!) : emptySessionWindow();
  for (let i = 0; i < tail.length; i++) {
    if (i > 0 && i % STREAM_PAGE === 0) await nextTurn();
    observe?.(state, tail[i]);
    evolveSessionWindow(state, tail[i]);
  }
  return state;
}

/**
 * The last compaction decision at or before `upTo` carrying a snapshot (null when none), and the
 * events after it up to `upTo` in revision order (the whole stream up to `upTo` when none). Reads
 * backwards in pages of {@link FIRST_PAGE} doubling up to {@link MAX_PAGE}.
 */
async function readBackToDecision(store: EventStore, stream: string, upTo: bigint | 'end'): Promise<{ decision: RecordedEvent | null; tail: RecordedEvent[] }> {
  const tail: RecordedEvent[] = [];
  let from: bigint | 'end' = upTo;
  let pageSize = FIRST_PAGE;
  let sinceTurn = 0;
  for (;;) {
    // Not bounded below: a page holds the `pageSize` events at or below `from` whatever gaps lie between (a
    // revision past the head, the erased revisions before a session's current life), so a short page is the
    // stream's start. (A page bounded to `pageSize` revisions walked down from a revision asked far past the
    // head one empty page at a time, 2^62 / 1024 reads without a turn for the event loop.)
    const page = await store.readStream(stream, { direction: 'backwards', fromRevision: from, maxCount: pageSize });
    for (const e of page) {
      if (snapshotOf(e)) return { decision: e, tail: tail.reverse() };
      tail.push(e);
    }
    if (page.length < pageSize) break;
    const last = page[page.length - 1].revision;
    if (last === 0n) break;
    from = last - 1n;
    pageSize = Math.min(MAX_PAGE, pageSize * 2);
    sinceTurn += page.length;
    if (sinceTurn >= STREAM_PAGE) {
      sinceTurn = 0;
      await nextTurn();
    }
  }
  return { decision: null, tail: tail.reverse() };
}

/** The state right after `decision` (a compaction's closing event), from its `snapshot`: its kept ranges read and folded a page at a time. */
async function stateAfterDecision(store: EventStore, stream: string, decision: RecordedEvent, snapshot: SessionSnapshot): Promise<SessionWindowState> {
  const state = emptySessionWindow();
  const foldKept = (e: RecordedEvent): void => {
    if (e.type === CONVERSATION_EVENT || e.type === SUMMARY_INSERTED) evolveSessionWindow(state, e);
  };
  for (const [fromRev, toRev] of snapshot.keptRanges) await visitStreamUpTo(store, stream, BigInt(toRev), foldKept, BigInt(fromRev));
  state.policy = snapshot.policy;
  state.policyRevision = snapshot.policyRevision !== undefined ? BigInt(snapshot.policyRevision) : null;
  state.consecutiveFailures = snapshot.consecutiveFailures;
  if (snapshot.userId) state.userId = snapshot.userId;
  state.archivedOpenCalls = new Map((snapshot.archivedOpenCalls ?? []).map(([id, compactionId, name]) => [id, { compactionId, name }]));
  state.eventsSinceCompaction = 0;
  evolveSessionWindow(state, decision);
  return state;
}

/**
 * The current state of `sessionId` (a `sessionKey`), or `null` when the stream does not exist
 * ({@link foldSessionUpTo} to its end). The state carries the stream's incarnation
 * (`EventStore.streamIncarnation`, one indexed read more).
 * Rejects with the store's errors (e.g. EventStoreUnavailableError).
 */
export async function loadSessionWindow(store: EventStore, sessionId: string): Promise<SessionWindowState | null> {
  const stream = sessionStream(sessionId);
  const folded = await foldSessionUpTo(store, stream, 'end');
  if (!folded) return null;
  // Read after the events: if the session was erased and written again meanwhile, the events are
  // the old life's and this the new one's, and the decision's expected revision (never reused) fails.
  folded.incarnation = await store.streamIncarnation(stream);
  return folded;
}

/**
 * The state of `sessionId` (a `sessionKey`) as it was right after revision `revision` (inclusive),
 * folded from the last compaction decision at or before it ({@link foldSessionUpTo}: the same
 * window as a fold from revision 0); `null` when the stream holds no event at or before it. A
 * revision past the end gives the current state.
 *
 * A revision inside one atomic decision (a compaction's decision events before its closing
 * `CompactionCompleted` / `CompactionFailed`; a late answer and the events after it in its append,
 * before the `EventsArchived` with `onArrival` that archives it; see {@link AtomicDecisionTracker})
 * gives the state after the whole decision: no reader ever saw the state in between (events
 * archived with no summary in their place, a tool result whose call is archived). The returned
 * state's `revision` is then the decision's last revision, past `revision`. Reads the window after
 * the last decision at or before `revision` and the events from it up to `revision`, plus those of
 * the decision after it. The state carries the stream's incarnation (one indexed read more).
 */
export async function loadSessionWindowAt(store: EventStore, sessionId: string, revision: bigint): Promise<SessionWindowState | null> {
  const stream = sessionStream(sessionId);
  // The tracker starts fresh after a closing decision event: no decision is open there.
  const decisions = new AtomicDecisionTracker();
  const state = await foldSessionUpTo(store, stream, revision, (s, e) => decisions.observe(s, e));
  if (!state) return null;
  state.incarnation = await store.streamIncarnation(stream);
  if (!decisions.inside) return state;
  // Inside a decision: read on to its end. A decision that never closes (a log written before late
  // answers were archived on arrival) leaves the state as it was at `revision`.
  const atRevision = cloneSessionWindow(state);
  let from = state.revision! + 1n;
  let pageSize = FIRST_PAGE;
  for (;;) {
    const page = await store.readStream(stream, { fromRevision: from, maxCount: pageSize, toRevision: from + BigInt(pageSize) - 1n });
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
