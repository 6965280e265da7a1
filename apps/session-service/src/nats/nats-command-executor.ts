/**
 * Runs one command message through the same validation (`../commands/session-command-requests`)
 * and the same command handlers as HTTP, and answers what HTTP would: `{ status, body }` with the
 * HTTP answer's JSON, or the error's `{ code, message, ... }` (via {@link toApiError}, the HTTP
 * app's one code → status table).
 *
 * Redelivery (after a crash between the append and the acknowledgement) never applies a command
 * twice: the ids an append or compact command writes are derived from its command id — client
 * ids of events sent without one, the compaction id (hence its decision ids) — so the store finds
 * them already there. A redelivered append is answered from the events it wrote; a redelivered
 * compact command is answered with its recorded decision, found in the log before anything is
 * planned (no summarizer call), however many decisions and appends came after it; a policy
 * command's event id derives from its command id too, so a redelivered one is answered with the
 * event it wrote, also after another policy was set since (never set again over it).
 */
import type { CommandBus } from '@nestjs/cqrs';
import { deterministicEventId, findInStream, type EventStore } from '@lib/event-store';
import {
  clientIdProblem,
  isStoredEventOf,
  LatestErasureTimes,
  readSessionLife,
  readSessionLifeAt,
  sessionKey,
  sessionStream,
  watchDecisions,
  type AppendSessionEventsCommand,
  type DecidedOn,
  type DecisionWatcher,
  type RequestedBy,
} from '@lib/session';
import type { RequestSchemas } from '../http/request-schemas';
import { toApiError } from '../http/api-error.filter';
import type { ReadModelsDamage } from '../observability/read-models-damage';
import {
  appendEventsCommandFrom,
  appendMessagesCommandFrom,
  eventsRequestPath,
  messagesRequestPath,
  withRequestPaths,
  compactCommandFrom,
  policyCommandFrom,
  type AssignClientId,
} from '../commands/session-command-requests';
import { admittedOverNats } from '../commands/write-admissions';
import { COMMAND_KINDS, parseCommandSubject, type CommandAddress, type CommandKind } from './nats-names';
import {
  NatsCommandError,
  commandIdMakesInvalidEventId,
  conflictingReplyTo,
  invalidCommandId,
  misspelledCommandId,
  invalidReplyTo,
  invalidSubject,
  malformedBody,
  payloadTooLarge,
  unknownCommand,
  unknownTenant,
  withNatsResendAdvice,
} from './nats-command-errors';
import { DEFAULT_REPLY_PREFIXES, replyToProblem, type ReplyToRule } from './nats-reply-to';
import { rejectDeepBody } from '../commands/body-depth';
import { DuplicateMemberError, rejectDuplicateMembers } from '../commands/duplicate-members';
import { basisDecidedOn, basisOfAnswer, readAnswerBasis, type AnswerBasis } from './answer-basis';

/** One delivered command message. */
export interface CommandMessage {
  subject: string;
  data: Uint8Array;
  /** `Nats-Msg-Id`, or `<stream>:<sequence>` when the publisher gave none (stable across redeliveries). */
  commandId: string;
  /** True when JetStream delivered it before (it may have been applied already). */
  redelivered: boolean;
  /** The publisher's `Nats-Msg-Id` header; absent, null or empty when it gave none. */
  msgId?: string | null;
  /** The `Reply-To` header (its name in any letter case: `readCommandHeaders`); absent or null when none, `''` when given empty (refused, as any value `replyToProblem` refuses). */
  replyTo?: string | null;
  /** Set when `Reply-To` was given more than once with different values (each `<name>: "<value>"`): refused, `invalid_reply_to`. */
  replyToConflict?: readonly string[] | null;
  /** Set when the headers have no `Nats-Msg-Id` but that name in another letter case (the spelling): refused, `invalid_command_id`. */
  msgIdSpelling?: string | null;
  /** The `Content-Encoding` header's value, if any: named when the body is not UTF-8 (commands are never decompressed). */
  contentEncoding?: string | null;
  /**
   * The life its session was in when this replica received it ({@link NatsCommandExecutor.readLifeOnReceipt},
   * kept across its attempts here); absent: read when it is executed. An append or a policy is written in that life or refused 409 `session_erased`.
   */
  lifeAtArrival?: Promise<bigint>;
}

/** Settings of {@link NatsCommandExecutor}. */
export interface NatsExecutorOptions {
  /** `NATS_PREFIX`. */
  prefix: string;
  /** The tenants served: `default` in open mode, else those of `API_KEYS`. */
  tenants: ReadonlySet<string>;
  /** `MAX_BODY_BYTES`. */
  maxBodyBytes: number;
  /**
   * True without `API_KEYS` (default true). Keyed (false), a `Nats-Msg-Id` must start with
   * `<tenant>:` and hold a command id after it (`invalid_command_id`), since the command stream de-duplicates ids across tenants.
   */
  openMode?: boolean;
  /** `NATS_REPLY_PREFIXES` (default `_INBOX`): a `Reply-To` elsewhere is rejected (`invalid_reply_to`). */
  replyPrefixes?: readonly string[];
  /** Where a command's error is reported, as the HTTP error filter does (the read models found damaged: `/health`'s `readModels.damaged`); none when absent. */
  damage?: ReadModelsDamage;
  /**
   * The commands' store (`COMMAND_EVENT_STORE`), which a redelivered append's check of the log
   * reads through: that read is part of the command, so its failure counts as a failed write
   * (`/health`'s `store.lastWriteError`). Default: the executor's store.
   */
  commandStore?: EventStore;
  /** `WRITE_DEADLINE_MS`: an append or policy command whose write has not started that long after its execution began is answered 503 `request_expired`, never written; none (default): no deadline. */
  writeDeadlineMs?: number;
}

/** The answer to a command: HTTP-equivalent status and JSON body; `address` when the subject parsed. */
export interface CommandAnswer {
  status: number;
  body: unknown;
  kind?: string;
  address?: CommandAddress;
  /**
   * What the command was decided on, published with the answer so that an erasure deletes exactly
   * the answers of the life it closes: derived from what its handler did (`basisOfAnswer`: the
   * event its answer names; else `basisDecidedOn`: the last state it loaded), read once answered
   * ({@link readAnswerBasis}) only when it loaded no state with an event. Absent when the subject
   * named no tenant this service serves, or that read failed (the answer is then taken by the
   * session's next erasure, whatever its life).
   */
  basis?: AnswerBasis;
}

/** UUID namespace of ids derived from transport command ids. */
const COMMAND_NAMESPACE = 'session-memory-compaction/nats-command';

const STATUS_OF: Record<CommandKind, number> = { append: 201, messages: 201, compact: 200, policy: 200 };

/** See the module doc. */
export class NatsCommandExecutor {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  /** The time of each commanded session's latest erasure, per life ({@link readLifeOnReceipt}). */
  private readonly erasureTimes = new LatestErasureTimes();

  constructor(
    private readonly commandBus: CommandBus,
    private readonly store: EventStore,
    private readonly schemas: RequestSchemas,
    private readonly options: NatsExecutorOptions,
  ) {
    this.replyRule = { prefix: options.prefix, allowedPrefixes: options.replyPrefixes ?? DEFAULT_REPLY_PREFIXES };
  }

  private readonly replyRule: ReplyToRule;

  /**
   * Executes `message`; never throws (every failure becomes an error answer). Checked in this
   * order, before anything is written: the subject (`invalid_subject`), its tenant
   * (`unknown_tenant`), its kind (`unknown_command`), `Reply-To` (`invalid_reply_to`: given twice
   * with different values, empty, or not a reply subject), `Nats-Msg-Id` (`invalid_command_id`: only
   * a look-alike spelling of it given; keyed, not starting with the tenant), then the body as HTTP does. The answer's
   * {@link AnswerBasis} is derived from what the handler did (see {@link CommandAnswer.basis}).
   */
  async execute(message: CommandMessage): Promise<CommandAnswer> {
    const address = parseCommandSubject(this.options.prefix, message.subject) ?? undefined;
    // The last state of the session the handler decided on (told by it: no read here).
    let decidedOn: DecidedOn | undefined;
    const watcher = { decidingOn: (state: DecidedOn) => void (decidedOn = state) };
    let answer: CommandAnswer;
    let stream: string | undefined;
    try {
      if (!address) throw invalidSubject(message.subject);
      const openMode = this.options.openMode ?? true;
      if (!this.options.tenants.has(address.tenant)) throw unknownTenant(address.tenant, openMode);
      stream = sessionStream(sessionKey(address.tenant, address.sessionId));
      if (!(COMMAND_KINDS as readonly string[]).includes(address.kind)) throw unknownCommand(address.kind);
      if (message.replyToConflict) throw conflictingReplyTo(message.replyToConflict);
      if (message.replyTo !== undefined && message.replyTo !== null) {
        const problem = replyToProblem(message.replyTo, this.replyRule);
        if (problem) throw invalidReplyTo(message.replyTo, problem);
      }
      if (message.msgIdSpelling) throw misspelledCommandId(message.msgIdSpelling);
      // Keyed: `<tenant>:` and a command id after it (an empty one would be every such command's).
      const scope = `${address.tenant}:`;
      if (!openMode && message.msgId && (!message.msgId.startsWith(scope) || message.msgId === scope)) throw invalidCommandId(message.msgId, address.tenant);
      const kind = address.kind as CommandKind;
      const body = this.parseBody(message.data, kind, message.contentEncoding);
      const result = await this.run(kind, address, body, message, watcher);
      answer = { status: STATUS_OF[kind], body: result, kind, address, basis: basisOfAnswer(stream, kind, result) ?? undefined };
    } catch (failure) {
      // Read models another build rewrote under this one answer as their damage (ReadModelsDamage.classify).
      const err = this.options.damage?.classify(failure) ?? failure;
      this.options.damage?.report(err, 'a NATS command');
      const { status, body } = err instanceof NatsCommandError ? { status: err.status, body: { code: err.code, message: err.message } } : toApiError(err);
      // "Send it again" / "retry" over NATS: with a new Nats-Msg-Id (JetStream drops the same one, unanswered, for 2 minutes).
      answer = { status, body: withNatsResendAdvice(body), kind: address?.kind, address };
    }
    if (stream === undefined || answer.basis) return answer;
    // Decided on a state it loaded (a refusal, a replayed compaction); else on the message alone or a session without events: read now.
    const basis = basisDecidedOn(stream, decidedOn) ?? (await readAnswerBasis(this.store, stream).catch(() => null));
    return basis ? { ...answer, basis } : answer;
  }

  private parseBody(data: Uint8Array, kind: CommandKind, contentEncoding?: string | null): unknown {
    if (data.length > this.options.maxBodyBytes) throw payloadTooLarge(data.length, this.options.maxBodyBytes, kind);
    let text: string;
    try {
      text = this.decoder.decode(data);
    } catch {
      throw malformedBody('malformed_body', undefined, undefined, data, contentEncoding);
    }
    try {
      rejectDeepBody(data);
    } catch (err) {
      throw new NatsCommandError('malformed_json', (err as Error).message);
    }
    // An empty command is `{}`, as an HTTP request with an empty body (parseUtf8Json): a compact command then compacts by the policy (newcomer ncnats72 F5).
    if (text.length === 0) return {};
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (err) {
      throw malformedBody('malformed_json', err, text);
    }
    // An object giving a member name twice: JSON.parse kept the last silently.
    try {
      rejectDuplicateMembers(text, body, 'message body');
    } catch (err) {
      throw err instanceof DuplicateMemberError ? new NatsCommandError('malformed_json', err.message) : err;
    }
    return body;
  }

  private async run(
    kind: CommandKind,
    { tenant, sessionId }: CommandAddress,
    body: unknown,
    message: CommandMessage,
    watcher: DecisionWatcher,
  ): Promise<unknown> {
    const key = sessionKey(tenant, sessionId);
    switch (kind) {
      case 'append':
      case 'messages': {
        const assignId = derivedClientIds(message.commandId);
        const command =
          kind === 'append'
            ? appendEventsCommandFrom(this.schemas, tenant, sessionId, body, assignId)
            : appendMessagesCommandFrom(this.schemas, tenant, sessionId, body, assignId);
        if (message.redelivered) {
          const applied = await this.appliedAppend(key, command);
          if (applied) return applied;
        }
        return withRequestPaths(
          () => this.commandBus.execute(watchDecisions(this.admitted(command, message), watcher)),
          kind === 'append' ? eventsRequestPath : messagesRequestPath,
        );
      }
      case 'policy': {
        // Its event's id derives from the command id: a redelivery (or a resend with the same Nats-Msg-Id) whose event is in
        // the log is answered with it, never set again over a policy set since (newcomer ncnats72 F2).
        const transport = { commandId: message.commandId, redelivered: message.redelivered, requestedBy: requesterOf(message) };
        return this.commandBus.execute(watchDecisions(this.admitted(policyCommandFrom(this.schemas, tenant, sessionId, body, transport), message), watcher));
      }
      case 'compact':
        return this.commandBus.execute(
          watchDecisions(
            compactCommandFrom(this.schemas, tenant, sessionId, body, {
              commandId: message.commandId,
              redelivered: message.redelivered,
              requestedBy: requesterOf(message),
            }),
            watcher,
          ),
        );
    }
  }

  /** `command` with its arrival (now), the write deadline when one is set, and the life its session was in when `message` was received ({@link admittedOverNats}). */
  private admitted<C extends object>(command: C, message: CommandMessage): C {
    return admittedOverNats(command, this.options.writeDeadlineMs, message.lifeAtArrival);
  }

  /**
   * Starts reading the life (stream incarnation) of the session `subject` names, as this replica
   * receives the command, before it queues behind the session's earlier commands: an append or a
   * policy published before an erasure and received before it landed is refused 409
   * `session_erased`, never written in the session's next life. With `storedAtMs` (when the command
   * stream stored it, ms since the epoch, the nats-server's clock), one stored at or before the
   * session's latest erasure and received after it is refused so too ({@link readSessionLifeAt}:
   * a backlog queued before an erasure went to the next life, newcomer ncnats66 F1). Undefined for a subject naming no
   * session of a tenant served here (its command is refused anyway). The promise's rejection (the
   * store's error) is raised by the handler that awaits it.
   */
  readLifeOnReceipt(subject: string, storedAtMs?: number): Promise<bigint> | undefined {
    const address = parseCommandSubject(this.options.prefix, subject);
    if (!address || !this.options.tenants.has(address.tenant)) return undefined;
    if (address.kind !== 'append' && address.kind !== 'messages' && address.kind !== 'policy') return undefined;
    const store = this.options.commandStore ?? this.store;
    const life =
      storedAtMs === undefined
        ? readSessionLife(store, address.tenant, address.sessionId)
        : readSessionLifeAt(store, this.erasureTimes, address.tenant, address.sessionId, storedAtMs);
    life.catch(() => undefined);
    return life;
  }

  /** The HTTP answer of an append whose events are all in the stream already (appends are atomic: the last one tells). */
  private async appliedAppend(key: string, command: AppendSessionEventsCommand): Promise<{ revision: string; position: string } | null> {
    const last = command.events[command.events.length - 1];
    if (!last) return null;
    // Ids are derived in the stream's current life (an erased session written again has other ids), in any form a build wrote.
    const stream = sessionStream(key);
    const store = this.options.commandStore ?? this.store;
    const incarnation = await store.streamIncarnation(stream);
    const recorded = await findInStream(store, stream, (e) => isStoredEventOf(key, incarnation, last.event.id, e));
    return recorded ? { revision: recorded.revision.toString(), position: recorded.position.toString() } : null;
  }
}

/**
 * Who sent the NATS command `message`, as its compaction decision or policy event records it
 * (`RequestedBy`): its command id (`Nats-Msg-Id`, or the one derived from its stream sequence) and
 * `via: 'nats'`; no key label and no `requestIdFrom` (NATS has neither). The one builder of both commands.
 */
export function requesterOf(message: Pick<CommandMessage, 'commandId'>): RequestedBy {
  return { requestId: message.commandId, via: 'nats' };
}

/**
 * Client ids `<commandId>:<n>` (`n` from 0) for events sent without one; for a command id over 200 characters
 * `<uuid>:<n>`, the UUID derived from the command id (an id holds at most 256 characters).
 * @throws NatsCommandError 400 `invalid_command_id` when such an id breaks the client id rule (`clientIdProblem`: a
 *   `Nats-Msg-Id` holding a control or invisible format character; newcomer ncnats66 F2: the event was stored under an id
 *   the README calls invalid, and `messages` blamed `messages[0].id`, a field its body did not have): nothing is applied.
 */
export function derivedClientIds(commandId: string): AssignClientId {
  const base = commandId.length <= 200 ? commandId : deterministicEventId(COMMAND_NAMESPACE, commandId);
  let n = 0;
  return () => {
    const id = `${base}:${n++}`;
    const problem = clientIdProblem(id);
    if (problem) throw commandIdMakesInvalidEventId(commandId, id, problem);
    return id;
  };
}
