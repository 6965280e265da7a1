import type { RecordedEvent } from '@lib/event-store';
import type { SessionEvent, Strategy } from '@lib/compaction';
import {
  COMPACTION_COMPLETED,
  COMPACTION_FAILED,
  CONVERSATION_EVENT,
  EVENTS_ARCHIVED,
  POLICY_SET,
  SUMMARY_INSERTED,
  sessionKey,
  sessionStream,
  type CompactionCompletedData,
  type CompactionFailedData,
  type ConversationEventData,
  type EventCosts,
  type EventsArchivedData,
  type PolicySetData,
  type SummaryInsertedData,
} from '../../events/session-stream-events';

const STRATEGY: Strategy = { type: 'sliding-window', maxEvents: 2 };
const BASE_TIME = Date.parse('2024-05-01T00:00:00.000Z');

/** Costs for tests: chars = n, the token estimators = n / 4 rounded up. */
export function costs(n: number): EventCosts {
  return { chars: n, cl100k_base: Math.ceil(n / 4), o200k_base: Math.ceil(n / 4) };
}

/**
 * Test helper: builds `RecordedEvent`s of session streams as the write side records them
 * (stream `session-<tenantId>.<sessionId>`, metadata `{ tenantId, sessionId }`; global positions
 * 1n, 2n, … across sessions; revisions 0n-based per stream; times one second apart).
 */
export class RecordedSessionLog {
  /** Every event built so far, in global order. */
  readonly events: RecordedEvent[] = [];
  private position = 0n;
  private readonly revisions = new Map<string, bigint>();

  constructor(private readonly tenantId = 'default') {}

  /** Appends a raw event to the session's stream (of `tenantId`, default the log's) and returns it. */
  record(sessionId: string, type: string, data: unknown, tenantId: string = this.tenantId): RecordedEvent {
    const stream = sessionStream(sessionKey(tenantId, sessionId));
    const revision = this.revisions.get(stream) ?? 0n;
    this.revisions.set(stream, revision + 1n);
    this.position += 1n;
    const event: RecordedEvent = {
      id: `00000000-0000-4000-8000-${this.position.toString().padStart(12, '0')}`,
      type,
      data,
      metadata: { tenantId, sessionId },
      streamId: stream,
      revision,
      position: this.position,
      created: new Date(BASE_TIME + Number(this.position) * 1000),
    };
    this.events.push(event);
    return event;
  }

  /** A conversation event (cost = its id length × 10 chars unless given). */
  append(sessionId: string, event: SessionEvent, options: { userId?: string; createdAt?: string; cost?: number } = {}): RecordedEvent {
    const data: ConversationEventData = {
      event,
      costs: costs(options.cost ?? event.id.length * 10),
      createdAt: options.createdAt ?? new Date(BASE_TIME + Number(this.position + 1n) * 1000).toISOString(),
    };
    if (options.userId) data.userId = options.userId;
    return this.record(sessionId, CONVERSATION_EVENT, data);
  }

  /** `EventsArchived`. */
  archive(sessionId: string, compactionId: string, archivedIds: string[]): RecordedEvent {
    const data: EventsArchivedData = { compactionId, archivedIds };
    return this.record(sessionId, EVENTS_ARCHIVED, data);
  }

  /** `EventsArchived` with `onArrival: true`: late answers archived on arrival, attributed to `compactionId` (DESIGN §3.3 rule 3). */
  archiveOnArrival(sessionId: string, compactionId: string, archivedIds: string[]): RecordedEvent {
    const data: EventsArchivedData = { compactionId, archivedIds, onArrival: true };
    return this.record(sessionId, EVENTS_ARCHIVED, data);
  }

  /** `SummaryInserted` with id `summary-<compactionId>` unless given. */
  summary(
    sessionId: string,
    compactionId: string,
    insertBeforeId: string,
    text: string,
    options: { summaryId?: string; coveredIds?: string[] } = {},
  ): RecordedEvent {
    const data: SummaryInsertedData = {
      compactionId,
      summaryId: options.summaryId ?? `summary-${compactionId}`,
      shadowPrompt: 'Summarize the conversation so far.',
      text,
      insertBeforeId,
      coveredIds: options.coveredIds ?? [],
      costs: costs(text.length),
      summarizer: { kind: 'extractive', model: 'extractive-v1', calls: 0, promptTokens: 0, completionTokens: 0 },
      createdAt: '2024-06-01T00:00:00.000Z',
    };
    return this.record(sessionId, SUMMARY_INSERTED, data);
  }

  /** `CompactionCompleted`. */
  completed(sessionId: string, compactionId: string, keptIds: string[] = []): RecordedEvent {
    const data: CompactionCompletedData = {
      compactionId,
      outcome: 'compacted',
      trigger: null,
      strategy: STRATEGY,
      estimator: 'chars',
      archivedCount: 0,
      keptCount: keptIds.length,
      tokensBefore: 100,
      tokensAfter: 40,
      tokensEstimatedSaved: 60,
      basedOnRevision: '0',
      keptIds,
      durationMs: 5,
      completedAt: '2024-06-01T00:00:01.000Z',
      origin: 'command',
      paramsKey: '{}',
      checkpoint: { keptRanges: [], policy: null, consecutiveFailures: 0 },
    };
    return this.record(sessionId, COMPACTION_COMPLETED, data);
  }

  /** `CompactionFailed`. */
  failed(sessionId: string, compactionId: string, archivedIds: string[] = []): RecordedEvent {
    const data: CompactionFailedData = {
      compactionId,
      stage: 'summarize',
      reason: 'blank reply',
      strategy: STRATEGY,
      trigger: null,
      basedOnRevision: '0',
      failedAt: '2024-06-01T00:00:02.000Z',
      origin: 'auto',
      tokensBefore: 100,
      archivedIds,
      estimator: 'chars',
      paramsKey: '{}',
      checkpoint: { keptRanges: [], policy: null, consecutiveFailures: 1 },
    };
    return this.record(sessionId, COMPACTION_FAILED, data);
  }

  /** `AutoCompactionPolicySet`. */
  policy(sessionId: string): RecordedEvent {
    const data: PolicySetData = { strategy: STRATEGY, trigger: { type: 'turn-count', maxTurns: 3 }, estimator: 'chars', setAt: '2024-06-01T00:00:00.000Z' };
    return this.record(sessionId, POLICY_SET, data);
  }

  /** The events of one session (of `tenantId`, default the log's), in revision order. */
  ofSession(sessionId: string, tenantId: string = this.tenantId): RecordedEvent[] {
    return this.events.filter((e) => e.streamId === sessionStream(sessionKey(tenantId, sessionId)));
  }
}

/** A user event. */
export const user = (id: string, text: string | null): SessionEvent => ({ id, type: 'user', text });
/** An assistant event, optionally with tool calls `[name, arguments]` (call ids `call-<id>-<i>`). */
export const assistant = (id: string, text: string | null, calls: Array<[string, string]> = []): SessionEvent => ({
  id,
  type: 'assistant',
  text,
  ...(calls.length ? { toolCalls: calls.map(([name, args], i) => ({ id: `call-${id}-${i}`, name, arguments: args })) } : {}),
});
/** A tool event answering `callId` with `data`. */
export const tool = (id: string, callId: string, name: string, data: string): SessionEvent => ({
  id,
  type: 'tool',
  responses: [{ toolCallId: callId, name, data }],
});
/** A stored system message. */
export const system = (id: string, text: string): SessionEvent => ({ id, type: 'system', text });
