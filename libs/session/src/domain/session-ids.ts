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

/** Id of the summary written by a compaction. */
export function summaryIdFor(compactionId: string): string {
  return `summary-${compactionId}`;
}

/** A fresh client id for an event the client sent without one. */
export function assignClientId(): string {
  return `evt-${randomUUID()}`;
}
