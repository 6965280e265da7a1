/**
 * Which revisions of a session stream end a state that was committed (DESIGN §4: a decision is
 * written in one append). Time travel answers the window after the whole decision that holds a
 * revision, never a state inside one. Pure: no I/O.
 *
 * Two kinds of decision span several revisions of one append, each marked by the events
 * themselves (no marker of its own):
 *
 * - a compaction: its `EventsArchived` and `SummaryInserted` (same `compactionId`) up to its
 *   closing `CompactionCompleted` / `CompactionFailed` (always the last event of its append);
 * - a late answer to a call archived while open (DESIGN §3.3 rule 3): the tool event, and the
 *   conversation events after it in its append, up to the `EventsArchived` with `onArrival: true`
 *   that archives it (written right after the conversation events of that append).
 *
 * A state inside one of these shows what no reader could see: events archived with no summary in
 * their place, or a tool result whose call is archived.
 */
import {
  COMPACTION_COMPLETED,
  COMPACTION_FAILED,
  CONVERSATION_EVENT,
  EVENTS_ARCHIVED,
  SUMMARY_INSERTED,
  type ConversationEventData,
  type EventsArchivedData,
  type SummaryInsertedData,
} from '../events/session-stream-events';
import type { SessionWindowState, StreamEvent } from './session-window';

/**
 * Follows a log folded in revision order and says whether the state after the events seen so far
 * is inside one atomic decision (see module doc). Call {@link observe} with each event *before*
 * it is folded into the state (a late answer is recognised by the archived call it answers, which
 * the fold then forgets).
 */
export class AtomicDecisionTracker {
  /** The compaction whose decision events were seen without its closing event. */
  private openCompaction: string | null = null;
  /** Client ids of late answers folded whose on-arrival archive has not been seen yet. */
  private readonly lateAnswers = new Set<string>();
  /** Whether an on-arrival archive was seen since the last conversation event (the append's conversation events are over). */
  private archivesStarted = false;

  /** True when the state after the observed events is inside a decision (not one any reader could see). */
  get inside(): boolean {
    return this.openCompaction !== null || this.lateAnswers.size > 0;
  }

  /**
   * Whether `recorded`, the event right after those observed, can belong to the decision the
   * state is inside (false when it is not inside one). A log written by this service always
   * closes its decisions; an event that cannot continue one (a log written before late answers
   * were archived on arrival) means the decision never closes: the state stays as it is.
   */
  continues(recorded: StreamEvent): boolean {
    if (this.openCompaction !== null) return compactionOf(recorded) === this.openCompaction;
    if (this.lateAnswers.size === 0) return false;
    if (recorded.type === CONVERSATION_EVENT) return !this.archivesStarted;
    return isOnArrivalArchive(recorded);
  }

  /**
   * Records `recorded`, to be folded next into `state` (the state after the events observed
   * before it). O(responses of the event) or O(ids it archives).
   */
  observe(state: SessionWindowState, recorded: StreamEvent): void {
    const compactionId = compactionOf(recorded);
    if (compactionId !== null) {
      this.lateAnswers.clear();
      const closing = recorded.type === COMPACTION_COMPLETED || recorded.type === COMPACTION_FAILED;
      this.openCompaction = closing ? null : compactionId;
      return;
    }
    this.openCompaction = null;
    if (isOnArrivalArchive(recorded)) {
      this.archivesStarted = true;
      for (const id of (recorded.data as EventsArchivedData).archivedIds) this.lateAnswers.delete(id);
      return;
    }
    if (recorded.type !== CONVERSATION_EVENT) {
      this.lateAnswers.clear();
      return;
    }
    // A conversation event after on-arrival archives starts another append: what they left unarchived never will be.
    if (this.archivesStarted) this.lateAnswers.clear();
    this.archivesStarted = false;
    const { event } = recorded.data as ConversationEventData;
    if (event.type === 'tool' && event.responses.some((r) => state.archivedOpenCalls.has(r.toolCallId))) this.lateAnswers.add(event.id);
  }
}

/** The compaction id of a compaction's own decision event (not an on-arrival archive), else null. */
function compactionOf(recorded: StreamEvent): string | null {
  switch (recorded.type) {
    case EVENTS_ARCHIVED:
      return isOnArrivalArchive(recorded) ? null : (recorded.data as EventsArchivedData).compactionId;
    case SUMMARY_INSERTED:
      return (recorded.data as SummaryInsertedData).compactionId;
    case COMPACTION_COMPLETED:
    case COMPACTION_FAILED:
      return (recorded.data as { compactionId: string }).compactionId;
    default:
      return null;
  }
}

function isOnArrivalArchive(recorded: StreamEvent): boolean {
  return recorded.type === EVENTS_ARCHIVED && (recorded.data as EventsArchivedData).onArrival === true;
}
