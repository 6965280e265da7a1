/**
 * The session's active window as a fold over its stream (the `evolve` half of the session
 * decider). Pure: no I/O.
 *
 * Ordering rule (DESIGN §3.3.4): conversation events keep log order; a summary sits immediately
 * before the event named by its `insertBeforeId`. Entries are ordered by (anchor revision,
 * summaries first, own revision), where a conversation event's anchor is its own revision and a
 * summary's anchor is the revision of the event it was inserted before.
 */
import {
  compactionFailureKind,
  pairToolCalls,
  withTextField,
  type CompactionFailureKind,
  type CostedEvent,
  type NoopReason,
  type SessionEvent,
} from '@lib/compaction';
import {
  COMPACTION_COMPLETED,
  COMPACTION_FAILED,
  CONVERSATION_EVENT,
  EVENTS_ARCHIVED,
  POLICY_SET,
  SUMMARY_INSERTED,
  type CompactionCompletedData,
  type CompactionFailedData,
  type ConversationEventData,
  type EstimatorName,
  type EventCosts,
  type EventsArchivedData,
  type PolicySetData,
  type SummarizerIdentity,
  type SummaryInsertedData,
  decisionFigures,
} from '../events/session-stream-events';
import { summaryAnchorRevision } from './summary-anchor';
import { endArchivedCallClaims } from './archived-call-claims';
import { utcMillisTime } from './utc-time-text';

/** One active event of the window. `revision` is its stream revision (bigint). */
export interface WindowEntry {
  event: SessionEvent;
  costs: EventCosts;
  revision: bigint;
  /** Revision of the event this entry is ordered at (its own, or the summary's insert-before event's). */
  anchorRevision: bigint;
  /**
   * When the event was created, as `Date.toISOString` text (UTC, milliseconds; {@link utcMillisTime}):
   * the client's `createdAt` (the log keeps the text as sent), else when the store recorded it.
   */
  createdAt: string;
  /** Compaction that wrote it, for summaries. */
  compactionId?: string;
}

/** The minimal view of a stored event the fold needs (matches the store's RecordedEvent). */
export interface StreamEvent {
  type: string;
  data: unknown;
  revision: bigint;
  /** Its global position in the store's log; absent for an event not read from the store (an append of this process being folded); negative when the store does not know it. */
  position?: bigint;
  /** When the store recorded it; the entry's `createdAt` when the client gave none. */
  created?: Date;
}

/**
 * Folded state of one session: the active window plus what the write side needs to decide.
 * `revision` is the revision of the last event folded (null before any).
 */
export interface SessionWindowState {
  revision: bigint | null;
  /**
   * Global position (bigint) of the last event folded: the log state a decision on this state
   * stands on (an answer that writes nothing names it, for `minPosition`). Null before any event,
   * and after an event folded without its position until the caller sets it (see
   * `SessionStateCache.appended`).
   */
  position: bigint | null;
  /**
   * The incarnation of the session's stream this state was loaded from (`EventStore.streamIncarnation`:
   * 0n for a session never erased; after an erasure, the first revision of the stream written
   * again). Ids decided on this state are derived with it (`session-ids`), so that they never
   * repeat the ids of an erased life of the session. 0n in a state not loaded from the store.
   */
  incarnation: bigint;
  /** Active entries keyed by client id. */
  active: Map<string, WindowEntry>;
  /**
   * Stream revision (bigint) by client id, for the ids a load from the last compaction decision's
   * snapshot knows (`loadSessionWindow`): the active window's entries (summaries included), and
   * every conversation event folded since that decision, archived on arrival or not. A compaction
   * decision drops the rest ({@link retainedRevisions}), so its size is O(active window + events
   * since the last compaction) however long the session has been folded live, the same as after a
   * restart. Ids archived before the last decision are looked up in the log on the paths that
   * need them (`clientIdsInLog`: a resend of archived events).
   */
  revisionsById: Map<string, bigint>;
  policy: PolicySetData | null;
  /** Revision of the policy event that set `policy` (null when unknown: no policy, or a session snapshot written before it was recorded). */
  policyRevision: bigint | null;
  /** The last compaction decision (compacted, a recorded noop, or failed) folded. */
  lastCompaction: RecordedCompaction | null;
  /** Conversation events appended since the last compaction decision (all of them when there was none). */
  eventsSinceCompaction: number;
  /** Failed compactions since the last successful one (those the service's shutdown interrupted not counted). */
  consecutiveFailures: number;
  /** Owner named by the first append that named one. */
  userId?: string;
  /**
   * Abandoned calls archived while open (DESIGN §3.3 rule 3), by call id: the compaction that
   * archived each and the tool name. Only the most recent call with an id is listed (a newer call
   * with the id removes it), and an answer removes it: a late answer is archived on arrival,
   * attributed to `compactionId`.
   */
  archivedOpenCalls: Map<string, ArchivedOpenCall>;
}

/**
 * A compaction decision as recorded in the log (its `CompactionCompleted` or `CompactionFailed`
 * event): enough to answer a replay of it (DESIGN §3.6) without reading the log again. Token
 * figures are in the unit of the decision's estimator.
 */
export interface RecordedCompaction {
  compactionId: string;
  basedOnRevision: string;
  /** `noop`: a pass that archived nothing, recorded because it was automatic with its trigger still firing (DESIGN §3.5) or for the summarizer calls it discarded. */
  outcome: 'compacted' | 'noop' | 'failed';
  paramsKey: string;
  /** Stream revision of the decision event. */
  revision: bigint;
  tokensBefore: number;
  /** For a failed decision: the window after it (smaller when superseded system messages were archived; see `decisionFigures`). */
  tokensAfter: number;
  tokensEstimatedSaved: number;
  /** For a failed decision: what it archived (superseded system messages only), why it failed and which summarizer failed. */
  failure?: { archivedIds: string[]; reason: string; failureKind?: CompactionFailureKind; summarizer?: SummarizerIdentity; interrupted?: 'shutdown' };
  /** For a recorded noop: why nothing was archived. */
  noop?: NoopReason;
  /** When an automatic pass recorded that its trigger still fires (DESIGN §3.5): the window's figures after it. */
  stillFiring?: { tokens: number; turns: number };
}

/**
 * The {@link RecordedCompaction} of a `CompactionCompleted` / `CompactionFailed` stream event,
 * or null for any other event.
 */
export function recordedCompactionOf(recorded: StreamEvent): RecordedCompaction | null {
  if (recorded.type !== COMPACTION_COMPLETED && recorded.type !== COMPACTION_FAILED) return null;
  const { compactionId, basedOnRevision, paramsKey } = recorded.data as CompactionCompletedData | CompactionFailedData;
  const common = { compactionId, basedOnRevision, paramsKey, revision: recorded.revision };
  if (recorded.type === COMPACTION_FAILED) {
    const data = recorded.data as CompactionFailedData;
    const failure = {
      archivedIds: data.archivedIds,
      reason: data.reason,
      ...(data.failureKind !== undefined ? { failureKind: compactionFailureKind(data.failureKind) } : {}),
      ...(data.summarizer ? { summarizer: data.summarizer } : {}),
      ...(data.interrupted ? { interrupted: data.interrupted } : {}),
    };
    const { tokensBefore, tokensAfter, tokensEstimatedSaved } = decisionFigures(data);
    return { ...common, outcome: 'failed', tokensBefore, tokensAfter, tokensEstimatedSaved, failure };
  }
  const data = recorded.data as CompactionCompletedData;
  const figures = decisionFigures(data);
  return {
    ...common,
    outcome: data.outcome === 'noop' ? 'noop' : 'compacted',
    ...(data.outcome === 'noop' ? { noop: noopReasonOf(data) } : {}),
    tokensBefore: figures.tokensBefore,
    tokensAfter: figures.tokensAfter,
    tokensEstimatedSaved: figures.tokensEstimatedSaved,
    ...(data.origin === 'auto' && data.triggerStillFires && data.turnsAfter !== undefined
      ? { stillFiring: { tokens: data.tokensAfter, turns: data.turnsAfter } }
      : {}),
  };
}

/** The noop reason a recorded noop decision carries (`within-limit` when it names none). */
function noopReasonOf(data: CompactionCompletedData): NoopReason {
  if (data.reason === 'open-tool-call') return { reason: 'open-tool-call', toolCallId: data.toolCallId ?? '', eventId: data.eventId ?? '' };
  return { reason: data.reason === 'newest-turn-only' ? 'newest-turn-only' : 'within-limit' };
}

/** An open call archived with its turn (abandoned); see {@link SessionWindowState.archivedOpenCalls}. */
export interface ArchivedOpenCall {
  compactionId: string;
  name: string;
}

/** An empty state (a session with no events). */
export function emptySessionWindow(): SessionWindowState {
  return {
    revision: null,
    position: null,
    incarnation: 0n,
    active: new Map(),
    revisionsById: new Map(),
    policy: null,
    policyRevision: null,
    lastCompaction: null,
    consecutiveFailures: 0,
    eventsSinceCompaction: 0,
    archivedOpenCalls: new Map(),
  };
}

/**
 * Records the open calls among `archivedIds` (calls of the active window with no answer in it,
 * each the most recent call with its id; pairing per `pairToolCalls`) as archived by
 * `compactionId`. Call before the ids leave `state.active`. O(archived ids) when none of them is
 * an active assistant event with tool calls (nothing to record: the window is neither ordered nor
 * paired; ordering 30,000 entries held the event loop ~10 ms per archive, issue 14), else
 * O(active window).
 */
function recordArchivedOpenCalls(state: SessionWindowState, archivedIds: readonly string[], compactionId: string): void {
  if (!archivedIds.some((id) => holdsToolCalls(state.active.get(id)))) return;
  const archived = new Set(archivedIds);
  const window = orderedWindow(state);
  const { calls } = pairToolCalls(window.map((e) => e.event));
  const latest = new Map(calls.map((c) => [c.id, c]));
  for (const call of calls) {
    const holder = window[call.callAt].event;
    if (!archived.has(holder.id) || call.responses.length > 0 || latest.get(call.id) !== call || holder.type !== 'assistant') continue;
    const name = holder.toolCalls?.find((c) => c.id === call.id)?.name ?? '';
    state.archivedOpenCalls.set(call.id, { compactionId, name });
  }
}

/** Whether `entry` is an assistant event making tool calls (false for none). */
function holdsToolCalls(entry: WindowEntry | undefined): boolean {
  return entry !== undefined && entry.event.type === 'assistant' && (entry.event.toolCalls?.length ?? 0) > 0;
}

/**
 * Applies one stream event to the state, in place, and returns it.
 * Unknown event types are ignored (forward compatibility). Events must be folded in revision order.
 */
export function evolveSessionWindow(state: SessionWindowState, recorded: StreamEvent): SessionWindowState {
  state.revision = recorded.revision;
  // Unknown when the event carries none, or a negative one (a KurrentDB server that does not tell answers -1n).
  state.position = recorded.position !== undefined && recorded.position >= 0n ? recorded.position : null;
  switch (recorded.type) {
    case CONVERSATION_EVENT: {
      const data = recorded.data as ConversationEventData;
      state.active.set(data.event.id, {
        // The stored event in the shape every read answers (an assistant's missing text read as null).
        event: withTextField(data.event),
        costs: data.costs,
        revision: recorded.revision,
        anchorRevision: recorded.revision,
        createdAt: data.createdAt == null ? (recorded.created?.toISOString() ?? '') : utcMillisTime(data.createdAt),
      });
      state.revisionsById.set(data.event.id, recorded.revision);
      state.eventsSinceCompaction += 1;
      endArchivedCallClaims(state.archivedOpenCalls, data.event);
      if (data.userId && !state.userId) state.userId = data.userId;
      break;
    }
    case EVENTS_ARCHIVED: {
      const data = recorded.data as EventsArchivedData;
      recordArchivedOpenCalls(state, data.archivedIds, data.compactionId);
      for (const id of data.archivedIds) state.active.delete(id);
      break;
    }
    case SUMMARY_INSERTED: {
      const data = recorded.data as SummaryInsertedData;
      const anchor = summaryAnchorRevision(data, { activeAnchor: (id) => state.active.get(id)?.anchorRevision }, recorded.revision);
      state.active.set(data.summaryId, {
        event: { id: data.summaryId, type: 'summary', shadowPrompt: data.shadowPrompt, text: data.text },
        costs: data.costs,
        revision: recorded.revision,
        anchorRevision: anchor,
        createdAt: utcMillisTime(data.createdAt),
        compactionId: data.compactionId,
      });
      state.revisionsById.set(data.summaryId, recorded.revision);
      break;
    }
    case COMPACTION_COMPLETED:
    case COMPACTION_FAILED:
      state.lastCompaction = recordedCompactionOf(recorded);
      // What a load from this decision's snapshot knows: the rest is the log's (DESIGN §4).
      state.revisionsById = retainedRevisions(state);
      // A recorded noop used no summarizer reply (its calls, if any, were discarded): it says nothing of the failures the backoff counts;
      // nor does a pass whose model call the service's shutdown aborted (`interrupted`).
      if (recorded.type === COMPACTION_FAILED) {
        if (!(recorded.data as CompactionFailedData).interrupted) state.consecutiveFailures += 1;
      } else if (state.lastCompaction!.outcome === 'compacted') state.consecutiveFailures = 0;
      state.eventsSinceCompaction = 0;
      break;
    case POLICY_SET:
      state.policy = recorded.data as PolicySetData;
      state.policyRevision = recorded.revision;
      break;
    default:
      break;
  }
  return state;
}

/**
 * The revisions by client id a state keeps right after a compaction decision: those of its active
 * entries (each entry's `revision`: the last event with its id). A new map; O(active window).
 */
export function retainedRevisions(state: Pick<SessionWindowState, 'active'>): Map<string, bigint> {
  const kept = new Map<string, bigint>();
  for (const [id, entry] of state.active) kept.set(id, entry.revision);
  return kept;
}

/** Folds a whole list of stream events (in revision order) into a fresh state. */
export function foldSessionWindow(events: Iterable<StreamEvent>, from: SessionWindowState = emptySessionWindow()): SessionWindowState {
  for (const e of events) evolveSessionWindow(from, e);
  return from;
}

/** Compares two entries by the window ordering rule (see module doc). */
export function compareWindowEntries(a: WindowEntry, b: WindowEntry): number {
  if (a.anchorRevision !== b.anchorRevision) return a.anchorRevision < b.anchorRevision ? -1 : 1;
  const aSummary = a.event.type === 'summary' && a.anchorRevision !== a.revision ? 0 : 1;
  const bSummary = b.event.type === 'summary' && b.anchorRevision !== b.revision ? 0 : 1;
  if (aSummary !== bSummary) return aSummary - bSummary;
  return a.revision < b.revision ? -1 : a.revision > b.revision ? 1 : 0;
}

/** The active window in order (see module doc). */
export function orderedWindow(state: SessionWindowState): WindowEntry[] {
  return [...state.active.values()].sort(compareWindowEntries);
}

/** The active window as the planner's input: events with their cost under `estimator`. */
export function costedWindow(state: SessionWindowState, estimator: EstimatorName): CostedEvent[] {
  return orderedWindow(state).map((entry) => ({ event: entry.event, tokens: entry.costs[estimator] }));
}

/** Sum of the window's costs under `estimator` (tokens, or UTF-16 code units for `chars`). */
export function windowTokens(entries: readonly WindowEntry[], estimator: EstimatorName): number {
  let total = 0;
  for (const e of entries) total += e.costs[estimator];
  return total;
}
