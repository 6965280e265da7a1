/**
 * Deterministic ids of the session stream (DESIGN §2.1): the store's event UUID is derived from
 * (session, incarnation of its stream, client id), so a retried request is idempotent end to end,
 * and a compaction's decision ids are derived from its compaction id.
 *
 * `incarnation` (bigint) is the session stream's incarnation (`EventStore.streamIncarnation`,
 * carried by the state as `SessionWindowState.incarnation`): 0n for a session never erased, whose
 * ids are those of the earlier formula; after an erasure the session written again under the same
 * id gets other ids for the same client ids, so the store never takes its events for a replay of
 * the erased ones (KurrentDB would answer success without writing them). Every id goes through
 * {@link sessionScopedId}, the one rule.
 */
import { randomUUID } from 'node:crypto';
import { deterministicEventId } from '@lib/event-store';

/** UUID namespace name for session event ids. */
const EVENT_NAMESPACE = 'session-memory-compaction/event';

/** The id named `name` within `sessionId` in the stream's life `incarnation` (see the module docs): the one rule every id below follows. */
function sessionScopedId(sessionId: string, incarnation: bigint, name: string): string {
  return deterministicEventId(EVENT_NAMESPACE, `${sessionId}\u0000${name}`, incarnation);
}

/** The store UUID of the conversation event `clientId` of `sessionId` in its stream's `incarnation`. */
export function storeEventId(sessionId: string, incarnation: bigint, clientId: string): string {
  return sessionScopedId(sessionId, incarnation, clientId);
}

/** The store UUID of the `index`-th decision event of compaction `compactionId`. */
export function decisionEventId(sessionId: string, incarnation: bigint, compactionId: string, index: number): string {
  return sessionScopedId(sessionId, incarnation, `decision\u0000${compactionId}\u0000${index}`);
}

/**
 * The store UUID of a policy event: derived from (session, incarnation, the revision the policy was checked
 * against, the policy's canonical key), so the same PUT racing itself on one revision is one event.
 */
export function policyEventId(sessionId: string, incarnation: bigint, basedOnRevision: bigint | null, policyKey: string): string {
  return sessionScopedId(sessionId, incarnation, `policy\u0000${String(basedOnRevision)}\u0000${policyKey}`);
}

/**
 * The id of a compaction: derived from (session, incarnation, base revision, parameters), so that two identical
 * commands racing on the same base revision produce the same decision and the store keeps one.
 */
export function compactionIdFor(sessionId: string, incarnation: bigint, basedOnRevision: bigint | null, paramsKey: string): string {
  return sessionScopedId(sessionId, incarnation, `compaction\u0000${String(basedOnRevision)}\u0000${paramsKey}`);
}

/**
 * The id of a compaction requested by a transport command that may be delivered twice (NATS):
 * derived from (session, incarnation, command id) only, so every delivery of the command decides under the
 * same id and the store keeps one decision.
 */
export function commandCompactionId(sessionId: string, incarnation: bigint, commandId: string): string {
  return sessionScopedId(sessionId, incarnation, `command\u0000${commandId}`);
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
export function arrivalArchiveEventId(sessionId: string, incarnation: bigint, clientId: string): string {
  return sessionScopedId(sessionId, incarnation, `archived-on-arrival\u0000${clientId}`);
}
