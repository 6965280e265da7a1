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
 * {@link sessionScopedIds}, the one rule; it also gives the form earlier builds wrote for the same
 * name (`deterministicEventIdForms`: builds up to 3771ca3 left the incarnation out, also in a life
 * after an erasure), carried as `formerIds` ({@link EventIds}) so the stores recognise a resend
 * of an event an earlier build wrote (`storedRowOf`), and matched by {@link isStoredEventOf}.
 */
import { randomUUID } from 'node:crypto';
import { summaryIdFor } from '@lib/compaction';
import { deterministicEventIdForms, type RecordedEvent } from '@lib/event-store';
import type { SessionWindowState } from './session-window';

/** UUID namespace name for session event ids. */
const EVENT_NAMESPACE = 'session-memory-compaction/event';

/**
 * Every id named `name` within `sessionId` has had in the stream's life `incarnation` (see the
 * module docs), the one to write first: the one rule every id below follows.
 */
function sessionScopedIds(sessionId: string, incarnation: bigint, name: string): string[] {
  return deterministicEventIdForms(EVENT_NAMESPACE, `${sessionId}\u0000${name}`, incarnation);
}

/** The id named `name` within `sessionId` in the stream's life `incarnation`: the form written now. */
function sessionScopedId(sessionId: string, incarnation: bigint, name: string): string {
  return sessionScopedIds(sessionId, incarnation, name)[0];
}

/** An event's id fields for `EventData`: `id` (written) and, when earlier builds derived another, `formerIds`. */
export interface EventIds {
  id: string;
  formerIds?: string[];
}

function eventIds(forms: string[]): EventIds {
  return forms.length > 1 ? { id: forms[0], formerIds: forms.slice(1) } : { id: forms[0] };
}

/** The store UUID of the conversation event `clientId` of `sessionId` in its stream's `incarnation`. */
export function storeEventId(sessionId: string, incarnation: bigint, clientId: string): string {
  return sessionScopedId(sessionId, incarnation, clientId);
}

/** {@link storeEventId} with the ids earlier builds gave the same event ({@link EventIds}). */
export function storeEventIds(sessionId: string, incarnation: bigint, clientId: string): EventIds {
  return eventIds(sessionScopedIds(sessionId, incarnation, clientId));
}

/**
 * Whether `recorded`, an event read from the stream of `sessionId` in its life `incarnation`, is
 * the conversation event `clientId`, whatever build wrote it: its id is one of the forms of
 * {@link storeEventIds}. (Read from the stream, it is in the current life: the stores keep no
 * erased event readable, so an erased life's id never matches.)
 */
export function isStoredEventOf(sessionId: string, incarnation: bigint, clientId: string, recorded: Pick<RecordedEvent, 'id'>): boolean {
  return sessionScopedIds(sessionId, incarnation, clientId).includes(recorded.id.toLowerCase());
}

/** The store UUID of the `index`-th decision event of compaction `compactionId`, with its former ids ({@link EventIds}). */
export function decisionEventIds(sessionId: string, incarnation: bigint, compactionId: string, index: number): EventIds {
  return eventIds(sessionScopedIds(sessionId, incarnation, `decision\u0000${compactionId}\u0000${index}`));
}

/** The store UUID of the `index`-th decision event of compaction `compactionId`. */
export function decisionEventId(sessionId: string, incarnation: bigint, compactionId: string, index: number): string {
  return decisionEventIds(sessionId, incarnation, compactionId, index).id;
}

/**
 * The store UUID of a policy event: derived from (session, incarnation, the revision the policy was checked
 * against, the policy's canonical key), so the same PUT racing itself on one revision is one event.
 */
export function policyEventId(sessionId: string, incarnation: bigint, basedOnRevision: bigint | null, policyKey: string): string {
  return policyEventIds(sessionId, incarnation, basedOnRevision, policyKey).id;
}

/** {@link policyEventId} with its former ids ({@link EventIds}). */
export function policyEventIds(sessionId: string, incarnation: bigint, basedOnRevision: bigint | null, policyKey: string): EventIds {
  return eventIds(sessionScopedIds(sessionId, incarnation, `policy\u0000${String(basedOnRevision)}\u0000${policyKey}`));
}

/**
 * The store UUID of the policy event of a transport command that may be delivered twice (NATS), with its former ids
 * ({@link EventIds}): derived from (session, incarnation, command id) only, so every delivery of the command (a
 * redelivery, a resend with the same `Nats-Msg-Id` after JetStream's duplicate window) decides under the same id, and
 * the store refuses it once the command's event is in the log, whatever was written after it (newcomer ncnats72 F2:
 * a redelivery set the policy again over one set since).
 */
export function commandPolicyEventIds(sessionId: string, incarnation: bigint, commandId: string): EventIds {
  return eventIds(sessionScopedIds(sessionId, incarnation, `policy-command\u0000${commandId}`));
}

/** Whether `recorded` (read from the session's stream in its life `incarnation`) is the policy event of command `commandId` ({@link commandPolicyEventIds}, any of its forms). */
export function isCommandPolicyEvent(sessionId: string, incarnation: bigint, commandId: string, recorded: Pick<RecordedEvent, 'id'>): boolean {
  return sessionScopedIds(sessionId, incarnation, `policy-command\u0000${commandId}`).includes(recorded.id.toLowerCase());
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
  return commandCompactionIds(sessionId, incarnation, commandId)[0];
}

/** Every form of {@link commandCompactionId} (the current first): a redelivered command finds its decision under any of them. */
export function commandCompactionIds(sessionId: string, incarnation: bigint, commandId: string): string[] {
  return sessionScopedIds(sessionId, incarnation, `command\u0000${commandId}`);
}

/**
 * Id of the summary written by compaction `compactionId` on `state`: the one rule of
 * `summaryIdFor` (@lib/compaction): `summary-<compactionId>`, unless an event the state holds
 * already has that id, else the first free of `summary-<compactionId>-2`, `-3`, … (a client may
 * append any id, that one included: newcomer ncapi66 F2, where the planner then refused the plan
 * and every pass answered 500). Taken are the ids `state` knows: its active window, summaries
 * included, and `revisionsById` (every event folded since its last decision), the ids a plan on it
 * may not repeat. The state is a function of the log, so the id is the same on any replica, on a
 * retry, and on a rebase onto a newer state (which re-derives it there: an event appended meanwhile
 * with the id moves the summary to the next free one). An event archived before the state's last
 * decision is not looked for (that would read the log back to its start at every pass): a summary
 * may take the id of such an event, as it could before. Pure.
 */
export function summaryIdOn(compactionId: string, state: Pick<SessionWindowState, 'active' | 'revisionsById'>): string {
  return summaryIdFor(compactionId, { has: (id) => state.active.has(id) || state.revisionsById.has(id) });
}

/** A fresh client id for an event the client sent without one. */
export function assignClientId(): string {
  return `evt-${randomUUID()}`;
}

/** The store UUID of the decision archiving the late answer `clientId` on arrival (one per answer, so a retry is idempotent). */
export function arrivalArchiveEventId(sessionId: string, incarnation: bigint, clientId: string): string {
  return arrivalArchiveEventIds(sessionId, incarnation, clientId).id;
}

/** {@link arrivalArchiveEventId} with its former ids ({@link EventIds}). */
export function arrivalArchiveEventIds(sessionId: string, incarnation: bigint, clientId: string): EventIds {
  return eventIds(sessionScopedIds(sessionId, incarnation, `archived-on-arrival\u0000${clientId}`));
}
