/**
 * The session decider (DESIGN §2 write path, §4): pure functions from (command, state, context) to
 * the events to append, or a {@link SessionError}. Handlers only load the state, call `decide…`,
 * append the events at the revision the state was loaded at, and on a conflict reload and decide
 * again. `evolveSessionWindow` (domain/session-window.ts) is the other half: it folds the events
 * back into the state.
 *
 * No I/O, no clock, no randomness: time arrives in the {@link DecideContext}, ids are derived
 * from the session and the command (domain/session-ids.ts).
 *
 * This module decides appends and policy changes; compactions are decided in two steps around
 * the summarizer call by `./compaction-decider.ts`.
 */
import { isDeepStrictEqual } from 'node:util';
import { withTextField, type SessionEvent, type Strategy, type Trigger } from '@lib/compaction';
import type { EventData } from '@lib/event-store';
import {
  CONVERSATION_EVENT,
  POLICY_SET,
  type ConversationEventData,
  type EstimatorName,
  type EventCosts,
  type PolicySetData,
  type SessionEventMetadata,
  sessionKey,
} from '../events/session-stream-events';
import { computeEventCosts } from '../domain/event-costs';
import { commandPolicyEventIds, policyEventIds, storeEventIds } from '../domain/session-ids';
import type { SessionWindowState } from '../domain/session-window';
import type { RequestedBy } from '../events/requested-by';
import { ToolCallLedger } from '../domain/tool-call-ledger';
import { NOTICE_NAME } from '../domain/openai-chat-format';
import { archiveOnArrival } from './archive-on-arrival';
import { duplicateIdInRequest, InvalidRequestError, UserIdConflictError } from '../errors';

/** What every decision needs from outside: the time (for `setAt` stamps). */
export interface DecideContext {
  now: Date;
}

/** The session a command addresses: tenant and session id (the stream is derived from both). */
export interface SessionAddress {
  tenantId: string;
  sessionId: string;
  /**
   * The incarnation of the session's stream (`EventStore.streamIncarnation`) when the decision is
   * taken without a state (the stream does not exist: never written, or erased); default 0n. A
   * state carries its own ({@link incarnationOf}).
   */
  incarnation?: bigint;
}

/**
 * The incarnation the ids of a decision on `state` are derived in (`session-ids`): the state's,
 * or, for a session without a stream, the command's (0n when it names none: never written).
 */
export function incarnationOf(state: Pick<SessionWindowState, 'incarnation'> | null, command: Pick<SessionAddress, 'incarnation'>): bigint {
  return state ? state.incarnation : (command.incarnation ?? 0n);
}

/** One event to append: a native session event (with its client id) plus optional client fields. */
export interface EventToAppend {
  event: SessionEvent;
  /** ISO-8601 time from the client, if given. */
  createdAt?: string;
  metadata?: Record<string, unknown>;
}

/** Command: append conversation events (client ids unique within the command). */
export interface AppendEvents extends SessionAddress {
  type: 'AppendEvents';
  events: readonly EventToAppend[];
  /** The session's user: the first append that names one makes it the owner; a later append may repeat it or leave it out. */
  userId?: string;
}

/** Command: set (strategy non-null) or clear (strategy null) the auto-compaction policy. */
export interface SetPolicy extends SessionAddress {
  type: 'SetPolicy';
  strategy: Strategy | null;
  trigger: Trigger | null;
  estimator: EstimatorName;
  /**
   * The id of the transport command that carries it, when that command may be delivered twice (NATS: its
   * `Nats-Msg-Id`); its event's id then derives from it ({@link commandPolicyEventIds}). Absent over HTTP.
   */
  commandId?: string;
  /**
   * Who sent it (the transport's {@link RequestedBy}), recorded in the policy event it writes;
   * absent when unknown (a caller that names none). Never part of the policy's identity: a policy
   * the session already has is `unchanged` whoever sends it again, and the event id does not
   * derive from it.
   */
  requestedBy?: RequestedBy;
}

/**
 * The decision on an append. `retry`: every id is already in the log, so this is a resend; the
 * store answers the original result when the content is identical, or raises a duplicate-id error.
 */
export interface AppendDecision {
  kind: 'append' | 'retry';
  events: EventData[];
  /**
   * A retry's events by runs of consecutive revisions in the log (their numbers, in order; the last
   * run also holds the arrival archives after it): decisions lie between the runs, and the store
   * answers each run as a retry of its own. Absent: one run.
   */
  runLengths?: readonly number[];
}

/**
 * The decision on a policy change: `unchanged` when the session already has exactly this policy, or
 * a clear finds a policy already cleared (nothing to append); `nothing-to-clear` when a clear
 * (strategy null) finds no policy ever set (nothing to append; `revision`: the session's, null when
 * the session does not exist).
 */
export type PolicyDecision =
  | { kind: 'unchanged'; policy: PolicySetData; revision: bigint }
  | { kind: 'nothing-to-clear'; revision: bigint | null }
  | { kind: 'append'; events: [EventData] };

function metadataOf(address: SessionAddress): SessionEventMetadata {
  return { tenantId: address.tenantId, sessionId: address.sessionId };
}

/**
 * The rules of an append that look at the request alone, not at the session: at least one event,
 * no client id given to two events. The handler checks them before anything is read (before the
 * client's `expectedRevision`), as the transports check each event's fields, so a malformed request
 * answers 400 whatever the session's revision; {@link checkAppend} (so {@link decideAppend}) checks them again.
 * @throws InvalidRequestError (400 `invalid_request`) on an empty list or a repeated client id, located at the second event with that id.
 */
export function checkAppendShape(events: readonly Pick<EventToAppend, 'event'>[]): void {
  if (events.length === 0) throw new InvalidRequestError('events', 'events: send at least one event');
  const seen = new Set<string>();
  events.forEach((e, index) => {
    if (seen.has(e.event.id)) throw new InvalidRequestError({ index, field: 'id' }, duplicateIdInRequest(e.event.id));
    seen.add(e.event.id);
  });
}

/**
 * The verdict of an append's rules, before any event is built: `retry` when every id is already in
 * the log (a resend), else `append`, with `lateAnswers`: each answer (client id) to a call archived
 * while open, with the compaction that archived it (empty for a retry). See {@link checkAppend}.
 */
export interface AppendVerdict {
  readonly kind: 'append' | 'retry';
  readonly lateAnswers: ReadonlyArray<{ eventId: string; compactionId: string }>;
}

/** The verdicts without late answers (shared, frozen: a verdict is never changed; no allocation on the common path). */
const RETRY: AppendVerdict = Object.freeze({ kind: 'retry', lateAnswers: Object.freeze([]) });
const APPEND: AppendVerdict = Object.freeze({ kind: 'append', lateAnswers: Object.freeze([]) });

/**
 * The rules of an append against the session's state (null: the stream does not exist yet), without
 * building its events, so without their costs: the one place these rules live; {@link decideAppend}
 * applies them first and builds the events only when they pass. None of its refusals depends on
 * the events' costs, so the handler runs it before counting a large request's tokens (off the
 * request thread, seconds for a few MB), and a refused request costs no counting.
 * Rules: at least one event; no client id twice in one command; a `userId` other than the
 * session's owner (the first one appended) is refused, also on a retry (a retry that adds or leaves
 * out the owner's `userId` is still a retry: see {@link alignToStored}); a resend of ids already in
 * the log is a retry (ids the state knows: see `SessionWindowState.revisionsById`; a resend of ids
 * archived before the last compaction is decided as an append here, and the handler finds it in the
 * log: the store's duplicate-id answer or a tool-call refusal sends it to `clientIdsInLog`); a
 * request holding ids in the log and new ones is an append the store refuses as a duplicate id,
 * without the tool-call rules (a stored answer resent in it is not a second answer); tool
 * calls stay valid for a provider ({@link ToolCallLedger}), which yields the late answers.
 * `callIdsInLog`: as for {@link decideAppend}. Pure; O(active window) when the command has tool
 * calls or responses, else O(events).
 * @throws InvalidRequestError (400 `invalid_request`) on an empty list or a repeated client id.
 * @throws UserIdConflictError (409 `user_id_conflict`) when `userId` differs from the session's owner.
 * @throws UnknownToolCallError, ToolCallConflictError (422) from the tool-call rules ({@link ToolCallLedger}).
 */
export function checkAppend(command: AppendEvents, state: SessionWindowState | null, callIdsInLog: Iterable<string> = []): AppendVerdict {
  const { events } = command;
  checkAppendShape(events);
  if (command.userId && state?.userId && command.userId !== state.userId) throw new UserIdConflictError(command.userId, state.userId);
  if (state && events.every((e) => state.revisionsById.has(e.event.id))) return RETRY;
  // Stored ids with new ones: never written, whatever the tool-call rules say of them; the store refuses the
  // first stored id (409 `duplicate_event_id`, README "Importing existing conversations"), so a stored answer
  // resent with new events is named as what it is, not as a second answer to its call.
  if (state && events.some((e) => state.revisionsById.has(e.event.id))) return APPEND;
  // Only tool calls and responses have tool-call rules: a command without them skips the ledger (O(active window) to build).
  if (!events.some((e) => takesPartInToolCalls(e.event))) return APPEND;
  const ledger = ToolCallLedger.of(activeEvents(state), state?.archivedOpenCalls, callIdsInLog);
  const lateAnswers = events.flatMap((e, index) => {
    const { archivedBy } = ledger.accept(e.event, index);
    return archivedBy ? [{ eventId: e.event.id, compactionId: archivedBy }] : [];
  });
  return { kind: 'append', lateAnswers };
}

/**
 * Decides an append against the session's state (null: the stream does not exist yet): the rules
 * of {@link checkAppend}, then the events to write. Each event is
 * costed once (DESIGN §3.1): `costs[i]` when given (the handler counts large requests off the
 * request thread, see `TokenCountingPool`), else here; and gets the store id derived from (session,
 * incarnation of its stream ({@link incarnationOf}), client id). A late answer to a call archived while open (abandoned) is followed by an `EventsArchived`
 * (`onArrival`) attributing it to the compaction that archived its call (`archiveOnArrival`).
 * A refused command costs no counting: the rules run before any event is costed.
 * Errors about one event carry its `EventLocation` (index in `command.events`, native field);
 * the transport names it in its request's terms.
 *
 * `callIdsInLog`: ids of calls the session's log holds outside what `state` keeps (calls archived
 * after they were answered). The state does not carry them (it stays O(active window), DESIGN
 * §4), so a first decision raises UnknownToolCallError for an answer to such a call; the handler
 * then looks the response ids up in the log and decides again with them, and the answer is a
 * second answer (`tool_call_conflict`).
 * @throws what {@link checkAppend} throws: InvalidRequestError, UserIdConflictError, UnknownToolCallError, ToolCallConflictError.
 */
export function decideAppend(
  command: AppendEvents,
  state: SessionWindowState | null,
  costs?: readonly EventCosts[],
  callIdsInLog: Iterable<string> = [],
): AppendDecision {
  const verdict = checkAppend(command, state, callIdsInLog);
  const key = sessionKey(command.tenantId, command.sessionId);
  const incarnation = incarnationOf(state, command);
  const metadata = metadataOf(command);
  const data = command.events.map((e, i): EventData => {
    const payload: ConversationEventData = {
      // Stored in the one shape every read answers (an assistant without text: text null, as /messages stores it).
      event: withTextField(e.event),
      costs: costs?.[i] ?? computeEventCosts(e.event),
      ...(e.createdAt ? { createdAt: e.createdAt } : {}),
      ...(e.metadata ? { metadata: e.metadata } : {}),
      ...(command.userId ? { userId: command.userId } : {}),
    };
    // The payload is read request values and counts, never changed: the store may hand it to the projector as it is (no parse of its metadata again).
    return { ...storeEventIds(key, incarnation, e.event.id), type: CONVERSATION_EVENT, data: payload, dataIsParsedJson: true, metadata };
  });
  if (verdict.lateAnswers.length === 0) return { kind: verdict.kind, events: data };
  // A late answer to a call archived while open is archived on arrival, in the same append (DESIGN §3.3 rule 3).
  return { kind: 'append', events: [...data, ...archiveOnArrival(key, incarnation, verdict.lateAnswers, metadata)] };
}

/**
 * A retry's events, each conversation event replaced by its stored data when the two hold the same
 * event (same fields and values, in any key order, `userId` and `costs` aside), so that the store's check,
 * which compares the stored JSON text, finds a retry (docs/http-api.md "Ids and retries"): `userId` is the
 * session's attribute, checked against the owner by {@link decideAppend}, not part of an event's
 * content; `costs` are the service's, derived from the content; and `/events` and `/messages` may write the same event's keys in another order.
 * `stored`: store event id → the stored data; an event not in it, or with other content, is left
 * as sent (the store then answers 409 `duplicate_event_id`).
 * `sentUnnamed`: the command's events as sent (in the order of `events`), when its tool responses
 * came without names (`/messages`: OpenAI tool messages carry only `tool_call_id`, see
 * `nameResponsesFromCalls`). A response sent with name `''` then matches the name stored with it
 * (its call's name when it was first written), whatever the state would name it after now (its
 * call archived after the answer, or its id reused by a newer call).
 */
export function alignToStored(events: readonly EventData[], stored: ReadonlyMap<string, unknown>, sentUnnamed?: readonly SessionEvent[]): EventData[] {
  return events.map((e, i) => {
    if (e.type !== CONVERSATION_EVENT || !stored.has(e.id)) return e;
    const kept = stored.get(e.id) as ConversationEventData;
    const data = e.data as ConversationEventData;
    const event = sentUnnamed?.[i] ? namedAsStored(sentUnnamed[i], kept.event) : data.event;
    return isDeepStrictEqual(clientContent({ ...data, event }), clientContent(kept)) ? { ...e, data: kept } : e;
  });
}

/**
 * What a client sent of an event's stored data: all of it but the owner (`userId`) and the
 * service's `costs`; a notice's `name: "notice"` (stored by `/messages` before notices were stored
 * without it) counts as absent, so a notice resent through either route is the same event; so does
 * an assistant's empty `toolCalls` list (`/messages` stored `tool_calls: []` without it before it
 * was kept as sent), so such a message resent through either route is the same event; and an
 * assistant's `text` left out is `text: null` ({@link withTextField}: stored so since, and always by `/messages`).
 */
function clientContent(data: ConversationEventData): Omit<ConversationEventData, 'userId' | 'costs'> {
  const { userId: _userId, costs: _costs, ...rest } = data;
  // An assistant event stored without text (before withTextField was the stored shape) is the same event as with text null.
  const event = withTextField(rest.event);
  if (event !== rest.event) rest.event = event;
  if (event.type === 'system' && event.notice === true && event.name === NOTICE_NAME) {
    const { name: _name, ...unnamed } = event;
    return { ...rest, event: unnamed };
  }
  if (event.type === 'assistant' && event.toolCalls?.length === 0) {
    const { toolCalls: _toolCalls, ...withoutCalls } = event;
    return { ...rest, event: withoutCalls };
  }
  return rest;
}

/** `sent` with each tool response sent with name `''` named as the stored event's response at its place, when that answers the same call. */
function namedAsStored(sent: SessionEvent, kept: SessionEvent): SessionEvent {
  if (sent.type !== 'tool' || kept.type !== 'tool' || sent.responses.length !== kept.responses.length) return sent;
  return {
    ...sent,
    responses: sent.responses.map((r, i) => (r.name === '' && r.toolCallId === kept.responses[i].toolCallId ? { ...r, name: kept.responses[i].name } : r)),
  };
}

/** True for the events the tool-call rules look at: tool responses and assistant events with calls. */
function takesPartInToolCalls(event: SessionEvent): boolean {
  return event.type === 'tool' || (event.type === 'assistant' && (event.toolCalls?.length ?? 0) > 0);
}

/** The active window's events in log order (nothing for a new session). */
function* activeEvents(state: SessionWindowState | null): Iterable<SessionEvent> {
  if (state) for (const entry of state.active.values()) yield entry.event;
}

/** The parts of a policy that make it the same policy (`setAt` aside), as a canonical JSON string. */
export function policyKey(policy: Pick<PolicySetData, 'strategy' | 'trigger' | 'estimator'>): string {
  return JSON.stringify([policy.strategy, policy.trigger, policy.estimator]);
}

/**
 * The payload of the policy event `command` writes at `setAt` (ISO-8601 UTC): the policy it sets,
 * or, for a clear (strategy null), a clear with trigger and estimator null, whatever the command
 * carries (the transports default a missing estimator to `cl100k_base`; a cleared policy counts in
 * none, as `GET …/policy` answers); with the command's `requestedBy` when it has one (absent
 * otherwise). The one rule of what a policy event holds. Pure.
 */
export function policyEventData(command: Pick<SetPolicy, 'strategy' | 'trigger' | 'estimator' | 'requestedBy'>, setAt: string): PolicySetData {
  const requester = command.requestedBy ? { requestedBy: command.requestedBy } : {};
  if (command.strategy === null) return { strategy: null, trigger: null, estimator: null, setAt, ...requester };
  return { strategy: command.strategy, trigger: command.trigger, estimator: command.estimator, setAt, ...requester };
}

/**
 * Decides a policy change: nothing when the session already has exactly this policy (a retried
 * PUT answers the event that set it, its `requestedBy` the setter's: who resends it does not count), or when a clear finds nothing to clear (see {@link PolicyDecision}), else one policy event stamped `context.now`, with an id
 * derived from (session, incarnation, the state's revision, the policy) so the same change racing itself on
 * one revision is one event; or, for a command with a `commandId` (NATS), from (session, incarnation, command id), so
 * that every delivery of the command is one event ({@link commandPolicyEventIds}).
 */
export function decideSetPolicy(command: SetPolicy, state: SessionWindowState | null, context: DecideContext): PolicyDecision {
  // The id derives from the command's key, as in builds before clears left their estimator out, so a clear's id is the same in every build.
  const key = policyKey(command);
  if (state?.policy && state.policyRevision !== null && policyKey(state.policy) === key) {
    return { kind: 'unchanged', policy: state.policy, revision: state.policyRevision };
  }
  // Clearing what is not set writes nothing: a clear over a cleared policy answers the clear, and with none ever set there is nothing to record.
  if (command.strategy === null && state?.policy && state.policyRevision !== null && state.policy.strategy === null) {
    return { kind: 'unchanged', policy: state.policy, revision: state.policyRevision };
  }
  if (command.strategy === null && !state?.policy) return { kind: 'nothing-to-clear', revision: state?.revision ?? null };
  const data = policyEventData(command, context.now.toISOString());
  return {
    kind: 'append',
    events: [
      {
        ...(command.commandId === undefined
          ? policyEventIds(sessionKey(command.tenantId, command.sessionId), incarnationOf(state, command), state?.revision ?? null, key)
          : commandPolicyEventIds(sessionKey(command.tenantId, command.sessionId), incarnationOf(state, command), command.commandId)),
        type: POLICY_SET,
        data,
        metadata: metadataOf(command),
      },
    ],
  };
}
