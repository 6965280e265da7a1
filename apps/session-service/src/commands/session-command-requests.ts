/**
 * Request bodies → validated commands, for every transport (DESIGN §1: "the command is the same
 * from any transport"). The HTTP controller and the NATS adapter both call these functions, so each
 * validation rule and each error code lives in one place. Bodies are the JSON bodies of the HTTP
 * requests (see `../http/request-schemas.ts`).
 */
import type { z } from 'zod';
import { parseStrategy, parseTrigger, quoteInput, InvalidParameterError, type Strategy, type Trigger } from '@lib/compaction';
import { parseCanonicalInteger, type ExpectedRevision } from '@lib/event-store';
import {
  AppendSessionEventsCommand,
  CompactSessionCommand,
  InvalidRequestError,
  SessionError,
  SetCompactionPolicyCommand,
  assignClientId,
  openAiFieldPath,
  openAiMessagesToEvents,
  noticeByName,
  type EstimatorName,
  type EventLocation,
  type EventToAppend,
  type RequestedBy,
} from '@lib/session';
import { nullOptionalsAsAbsent, type RequestSchemas } from '../http/request-schemas';
import { sessionIdProblem } from '../http/session-id-rule';
import { validate } from '../http/validate';
import { checkAppendRoute } from './append-route-hint';
import { misplacedField, POLICY_FOREIGN_FIELDS, type ParameterBody } from './misplaced-field';

/** Validates a session id ({@link sessionIdProblem}). @throws InvalidRequestError (400 `invalid_session_id`, saying what to fix and where). */
export function checkSessionId(sessionId: string): string {
  const problem = sessionIdProblem(sessionId);
  if (problem !== undefined) throw new InvalidRequestError('sessionId', `sessionId: ${problem}`, 'invalid_session_id');
  return sessionId;
}

/** A validated `expectedRevision` (keyword, safe integer, or canonical decimal text) → the store's {@link ExpectedRevision}. */
function toExpectedRevision(value: string | number | undefined): ExpectedRevision {
  if (value === undefined) return 'any';
  if (value === 'any' || value === 'no_stream' || value === 'stream_exists') return value;
  return typeof value === 'number' ? BigInt(value) : parseCanonicalInteger(value)!;
}

/** Runs `check` on a converted message; a validation error is re-issued in the OpenAI shape's terms (400 `invalid_message`). */
function asMessageError<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (!(err instanceof InvalidRequestError)) throw err;
    throw new InvalidRequestError(openAiFieldPath(err.parameter), openAiFieldPath(err.message), 'invalid_message');
  }
}

/**
 * Parses a strategy, naming parameters as `strategy.<name>`; a key sent inside it that belongs
 * elsewhere (a field of the request body, a parameter of another strategy type or of the trigger) is
 * told where ({@link misplacedField}). @throws InvalidRequestError (400 `invalid_parameter`).
 */
export function strategyFrom(input: unknown, body?: ParameterBody): Strategy {
  try {
    return parseStrategy(input);
  } catch (err) {
    throw asParameterError(err, 'strategy', input, body);
  }
}

/** Parses an optional trigger, naming parameters as `trigger.<name>`, as {@link strategyFrom}. @throws InvalidRequestError (400). */
export function triggerFrom(input: unknown, body?: ParameterBody): Trigger | null {
  if (input === undefined || input === null) return null;
  try {
    return parseTrigger(input);
  } catch (err) {
    throw asParameterError(err, 'trigger', input, body);
  }
}

function asParameterError(err: unknown, prefix: 'strategy' | 'trigger', input: unknown, body: ParameterBody | undefined): unknown {
  if (!(err instanceof InvalidParameterError)) return err;
  const parameter = err.parameter.startsWith(prefix) ? err.parameter : `${prefix}.${err.parameter}`;
  const inside = body === undefined ? undefined : misplacedField(err, prefix, input, body);
  if (inside !== undefined) return new InvalidRequestError(inside.parameter, inside.message, 'invalid_parameter');
  return new InvalidRequestError(parameter, err.message.includes(parameter) ? err.message : `${parameter}: ${err.message}`, 'invalid_parameter');
}

/**
 * Gives client ids to events sent without one. HTTP uses fresh random ids; a transport that may
 * deliver a command twice passes ids derived from the command id, so the retry is idempotent.
 */
export type AssignClientId = () => string;

/**
 * The body of `POST /v1/sessions/:sessionId/events` → an append command.
 * @throws InvalidRequestError (400) naming the first invalid field; a body of OpenAI chat
 *   messages is sent to `/messages` ({@link checkAppendRoute}).
 */
export function appendEventsCommandFrom(
  schemas: RequestSchemas,
  tenant: string,
  sessionId: string,
  body: unknown,
  assignId: AssignClientId = assignClientId,
): AppendSessionEventsCommand {
  checkSessionId(sessionId);
  checkAppendRoute(body, 'events');
  const input = validate(schemas.appendEvents, nullOptionalsAsAbsent(schemas.appendEvents, body));
  const events: EventToAppend[] = input.events.map((e, i) => {
    const { id, createdAt, metadata, ...rest } = e;
    return { event: noticeByName({ ...rest, id: id ?? assignId() } as EventToAppend['event'], `events[${i}]`), createdAt, metadata };
  });
  return new AppendSessionEventsCommand(tenant, sessionId, events, toExpectedRevision(input.expectedRevision), input.userId);
}

/**
 * The body of `POST /v1/sessions/:sessionId/messages` (OpenAI chat messages) → an append command.
 * A tool message without `name` answers with the name of its call: from this request when the call
 * is in it, else resolved by the append handler in the session state the append is decided on
 * (`responseNames: 'from-calls'`), so a call appended by a concurrent request is named right.
 * A message's `createdAt` (an extension of the OpenAI shape; null counts as absent) is its event's,
 * under the rule of every time the API reads (`clientDateTime`), named `messages[i].createdAt`.
 * @throws InvalidRequestError (400 `validation_failed` / `invalid_message`); a body of native
 *   events is sent to `/events` ({@link checkAppendRoute}).
 */
export function appendMessagesCommandFrom(
  schemas: RequestSchemas,
  tenant: string,
  sessionId: string,
  body: unknown,
  assignId: AssignClientId = assignClientId,
): AppendSessionEventsCommand {
  checkSessionId(sessionId);
  checkAppendRoute(body, 'messages');
  const input = validate(schemas.appendMessages, nullOptionalsAsAbsent(schemas.appendMessages, body));
  const parsed = openAiMessagesToEvents(input.messages, { assignId, readsCreatedAt: true });
  const events: EventToAppend[] = parsed.map((event, i) => {
    // A message's createdAt (null: absent) is the event's, checked by the native event's rule (every time the API reads has one).
    const sent = (input.messages[i] as { createdAt?: unknown }).createdAt;
    const withTime = sent === undefined || sent === null ? event : { ...event, createdAt: sent };
    const { createdAt, ...checked } = asMessageError(() => validate(schemas.nativeEvent, withTime, `messages[${i}]`));
    return { event: { ...checked, id: event.id } as EventToAppend['event'], ...(createdAt !== undefined ? { createdAt } : {}) };
  });
  return new AppendSessionEventsCommand(tenant, sessionId, events, toExpectedRevision(input.expectedRevision), input.userId, 'from-calls');
}

/**
 * How a request names a place in its append command's events (an {@link EventLocation}: the
 * event's index and a native field under it): `/events` as `events[i].<field>`, `/messages` in
 * OpenAI terms (`messages[i].tool_calls[k].id`, `messages[i].tool_call_id`).
 */
export type RequestPathOf = (location: EventLocation) => string;

/** {@link RequestPathOf} for `POST …/events` (native events). */
export const eventsRequestPath: RequestPathOf = ({ index, field }) => `events[${index}].${field}`;

/** {@link RequestPathOf} for `POST …/messages` (OpenAI chat messages). */
export const messagesRequestPath: RequestPathOf = ({ index, field }) => `messages[${index}]${openAiFieldPath(`.${field}`)}`;

/**
 * Runs an append command; an error it raises about one of its events is restated with the
 * request path of that event's field (`parameter` and the message's prefix).
 */
export async function withRequestPaths<T>(run: () => Promise<T>, pathOf: RequestPathOf): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw err instanceof SessionError && err.location ? err.restatedAt(pathOf(err.location)) : err;
  }
}

/**
 * The body of `POST /v1/sessions/:sessionId/compactions` → a compact command. `commandId` (when a
 * transport gives one) makes the compaction id, hence the decision event ids, derive from it;
 * `redelivered` (the transport delivered it before) has its recorded decision answered when there is one;
 * `requestedBy` (who sent it) is recorded in its decision.
 * An optional field sent null counts as absent ({@link nullOptionalsAsAbsent}): `trigger` null fires
 * always, `estimator` null is `cl100k_base`, `dryRun` null is false. `strategy` absent (or null):
 * compact by the session's stored policy, its strategy, trigger and estimator as in force on the
 * state the pass is decided on (`compactionOn` of `@lib/session`; a session without one is refused
 * there, 400 `invalid_parameter` naming `strategy`). Such a request names no `trigger` and no
 * `estimator` (null or absent): the policy's go with its strategy, and one sent is refused rather
 * than mixed into it.
 * @throws InvalidRequestError (400; `invalid_parameter` naming `trigger` or `estimator` sent without a strategy).
 */
export function compactCommandFrom(
  schemas: RequestSchemas,
  tenant: string,
  sessionId: string,
  body: unknown,
  transport: { commandId?: string; redelivered?: boolean; requestedBy?: RequestedBy } = {},
): CompactSessionCommand {
  const { commandId, redelivered = false, requestedBy } = transport;
  checkSessionId(sessionId);
  const input = validate(schemas.compact, nullOptionalsAsAbsent(schemas.compact, body));
  const dryRun = input.dryRun ?? false;
  if (input.strategy === undefined || input.strategy === null) {
    const extra = input.trigger !== undefined && input.trigger !== null ? 'trigger' : input.estimator !== undefined ? 'estimator' : undefined;
    if (extra)
      throw new InvalidRequestError(
        extra,
        `${extra}: sent without a strategy: a compaction without one uses the session's policy, its strategy, trigger and estimator together; leave ${extra} out (null) to compact by the policy, or send a strategy with it`,
        'invalid_parameter',
      );
    return new CompactSessionCommand(tenant, sessionId, null, null, null, dryRun, 'command', commandId, redelivered, requestedBy);
  }
  const sentIn: ParameterBody = { fields: Object.keys(schemas.compact.shape), body: input };
  const strategy = strategyFrom(input.strategy, sentIn);
  const trigger = triggerFrom(input.trigger, sentIn);
  const estimator: EstimatorName = input.estimator ?? 'cl100k_base';
  return new CompactSessionCommand(tenant, sessionId, strategy, trigger, estimator, dryRun, 'command', commandId, redelivered, requestedBy);
}

/** What {@link policyCommandFrom} answers for a body without a strategy and nothing else amiss (`{}` included). */
export const POLICY_STRATEGY_REQUIRED = 'strategy: is required: send a strategy to set the policy, or {"strategy": null} to clear it';

/**
 * The policy body validated; a body that leaves the strategy out with no other fault (`{}`, which a
 * client may send to mean "no policy") is told how to clear the policy as well (newcomer ncfresh63 F4).
 * @throws InvalidRequestError as {@link validate}.
 */
function policyInput(schemas: RequestSchemas, body: unknown): z.infer<RequestSchemas['policy']> {
  try {
    return validate(schemas.policy, nullOptionalsAsAbsent(schemas.policy, body), '', { foreign: POLICY_FOREIGN_FIELDS });
  } catch (err) {
    if (err instanceof InvalidRequestError && err.message === 'strategy: is required') {
      throw new InvalidRequestError(err.parameter, POLICY_STRATEGY_REQUIRED, err.code);
    }
    throw err;
  }
}

/**
 * The body of `PUT /v1/sessions/:sessionId/policy` → a policy command (idempotent by itself: the
 * policy a session already has appends nothing). The body is the policy as `GET …/policy` answers
 * it (a `PolicyAnswer`), so an answer sent back as it is sets the same policy: `strategy` (null
 * clears the policy), `trigger` and `estimator`; the read-only `sessionId` (when sent, the path's),
 * `setAt`, `revision`, `position` and `requestedBy` are accepted and ignored (a stale `revision` is no
 * precondition). The precondition is the optional `expectedRevision`, in the append routes' forms
 * and with their rule (null refused: 400). An optional field sent null counts as
 * absent ({@link nullOptionalsAsAbsent}, the rule of every body): `trigger` null or absent fires
 * always, `estimator` null or absent is `cl100k_base`. A clear carries no trigger and no estimator
 * (null or absent), for every transport: the one place of that rule (a trigger with a null strategy
 * was recorded, then read as a clear).
 * @throws InvalidRequestError (400; `invalid_parameter` naming `trigger` or `estimator` when sent
 *   with a null strategy, or `sessionId` when it names another session; `validation_failed` naming
 *   `expectedRevision` when it is null or not a revision or keyword, or an unknown field: `dryRun`,
 *   which only a compaction has, with {@link POLICY_FOREIGN_FIELDS}' advice, at the top level as in
 *   the strategy or trigger).
 * `transport`, as for {@link compactCommandFrom}: `commandId` and `redelivered`, the NATS command
 * that carries it (its id, whether redelivered; see {@link SetCompactionPolicyCommand}; absent over
 * HTTP); `requestedBy`, who sent it (the HTTP `Requester`, or the NATS command's id and `via: 'nats'`),
 * recorded in its policy event. The read-only `requestedBy` of a body sent back is ignored: the
 * event names the sender of this request, never what its body says.
 */
export function policyCommandFrom(
  schemas: RequestSchemas,
  tenant: string,
  sessionId: string,
  body: unknown,
  transport: { commandId?: string; redelivered?: boolean; requestedBy?: RequestedBy } = {},
): SetCompactionPolicyCommand {
  const { commandId, redelivered = false, requestedBy } = transport;
  checkSessionId(sessionId);
  // dryRun beside the strategy is told that a policy has no dry run, as inside it (misplaced-field.ts)
  const input = policyInput(schemas, body);
  if (input.sessionId !== undefined && input.sessionId !== sessionId) {
    throw new InvalidRequestError(
      'sessionId',
      `sessionId: is ${quoteInput(input.sessionId)}, another session than the ${quoteInput(sessionId)} this request is sent to: leave it out or send this session's id`,
      'invalid_parameter',
    );
  }
  if (input.strategy === null) {
    const extra = input.trigger !== undefined && input.trigger !== null ? 'trigger' : input.estimator !== undefined ? 'estimator' : undefined;
    if (extra)
      throw new InvalidRequestError(
        extra,
        `${extra}: a policy without a strategy has no ${extra}: to clear the policy send {"strategy": null} (${extra} null or left out), or give a strategy to set one`,
        'invalid_parameter',
      );
  }
  const sentIn: ParameterBody = { fields: Object.keys(schemas.policy.shape), body: input, foreign: POLICY_FOREIGN_FIELDS };
  const strategy = input.strategy === null ? null : strategyFrom(input.strategy, sentIn);
  const trigger = triggerFrom(input.trigger, sentIn);
  return new SetCompactionPolicyCommand(
    tenant,
    sessionId,
    strategy,
    trigger,
    input.estimator ?? 'cl100k_base',
    toExpectedRevision(input.expectedRevision),
    commandId !== undefined ? { commandId, redelivered } : undefined,
    requestedBy,
  );
}
