/**
 * Deterministic ids of the session stream (DESIGN §2.1): the store's event UUID is derived from
 * (session, client id), so a retried request is idempotent end to end, and a compaction's
 * decision ids are derived from its compaction id.
 */
import { randomUUID } from 'node:crypto';
import { deterministicEventId } from '@lib/event-store';

/** UUID namespace name for session event ids. */
const EVENT_NAMESPACE = 'session-memory-compaction/event';

/** The store UUID of the conversation event `clientId` of `sessionId`. */
export function storeEventId(sessionId: string, clientId: string): string {
  return deterministicEventId(EVENT_NAMESPACE, `${sessionId}\u0000${clientId}`);
}

/** The store UUID of the `index`-th decision event of compaction `compactionId`. */
export function decisionEventId(sessionId: string, compactionId: string, index: number): string {
  return deterministicEventId(EVENT_NAMESPACE, `${sessionId}\u0000decision\u0000${compactionId}\u0000${index}`);
}

/**
 * The store UUID of a policy event: derived from (session, the revision the policy was checked
 * against, the policy's canonical key), so the same PUT racing itself on one revision is one event.
 */
export function policyEventId(sessionId: string, basedOnRevision: bigint | null, policyKey: string): string {
  return deterministicEventId(EVENT_NAMESPACE, `${sessionId}\u0000policy\u0000${String(basedOnRevision)}\u0000${policyKey}`);
}

/**
 * The id of a compaction: derived from (session, base revision, parameters), so that two identical
 * commands racing on the same base revision produce the same decision and the store keeps one.
 */
export function compactionIdFor(sessionId: string, basedOnRevision: bigint | null, paramsKey: string): string {
  return deterministicEventId(EVENT_NAMESPACE, `${sessionId}\u0000compaction\u0000${String(basedOnRevision)}\u0000${paramsKey}`);
}

/**
 * The id of a compaction requested by a transport command that may be delivered twice (NATS):
 * derived from (session, command id) only, so every delivery of the command decides under the
 * same id and the store keeps one decision.
 */
export function commandCompactionId(sessionId: string, commandId: string): string {
  return deterministicEventId(EVENT_NAMESPACE, `${sessionId}\u0000command\u0000${commandId}`);
}

/** Id of the summary written by a compaction. */
export function summaryIdFor(compactionId: string): string {
  return `summary-${compactionId}`;
}

/** A fresh client id for an event the client sent without one. */
export function assignClientId(): string {
  return `evt-${randomUUID()}`;
}

/** The store UUID of the decision archiving the late answer `clientId` on arrival (one per answer, so a retry is idempotent). */
export function arrivalArchiveEventId(sessionId: string, clientId: string): string {
  return deterministicEventId(EVENT_NAMESPACE, `${sessionId}\u0000archived-on-arrival\u0000${clientId}`);
}
