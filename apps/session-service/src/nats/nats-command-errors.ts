/**
 * Errors only the message transport meets (HTTP rejects the same things in its router and body
 * parser). Each carries a stable code and the HTTP-equivalent status, and is published like every
 * other error: `{ "code", "message" }`.
 */
import { quoteInput } from '@lib/compaction';
import { malformedJsonMessage } from '../commands/json-syntax-error';
import { statusOfCode, type ApiErrorCode } from '../http/error-codes';
import { tooLargeAdvice } from '../http/api-error.filter';

/** A command the NATS adapter rejects before any handler runs; `status`: the code's (`error-codes.ts`). */
export class NatsCommandError extends Error {
  readonly status: number;

  constructor(
    readonly code: ApiErrorCode,
    message: string,
  ) {
    super(message);
    this.status = statusOfCode(code);
  }
}

/** 400 `unknown_command`: the subject's last token is not a command kind. */
export function unknownCommand(kind: string): NatsCommandError {
  return new NatsCommandError('unknown_command', `unknown command ${quoteInput(kind)}: the subject must end in compact, append, messages or policy`);
}

/**
 * 403 `unknown_tenant`: this service does not serve the subject's tenant. `openMode`: no `API_KEYS`
 * (only tenant `default` is served); else the tenants are those of `API_KEYS` (not listed: one
 * tenant's client is not told the others').
 */
export function unknownTenant(tenant: string, openMode: boolean): NatsCommandError {
  const served = openMode
    ? 'without API_KEYS (open mode) the service serves only tenant "default": publish on <prefix>.commands.default.…'
    : "publish on your own tenant's subjects (a tenant of API_KEYS)";
  return new NatsCommandError('unknown_tenant', `tenant ${quoteInput(tenant)} is not served here: ${served}`);
}

/**
 * 400 `invalid_reply_to`: the `Reply-To` header names a subject answers may not go to;
 * `problem` says why (from `replyToProblem`). Nothing is applied: the answer is on the results subject.
 */
export function invalidReplyTo(replyTo: string, problem: string): NatsCommandError {
  return new NatsCommandError(
    'invalid_reply_to',
    `Reply-To ${quoteInput(replyTo)} ${problem}: answers go only to reply inboxes (e.g. createInbox()); the command was not applied, send it again with such a Reply-To or none (the answer is also on the results subject)`,
  );
}

/**
 * 400 `invalid_reply_to`: `Reply-To` given more than once (in one spelling or several: its name is
 * read in any letter case) with different values, `given` each as `<name>: "<value>"`: the service
 * would have to guess where the client waits. Nothing is applied.
 */
export function conflictingReplyTo(given: readonly string[]): NatsCommandError {
  return new NatsCommandError(
    'invalid_reply_to',
    `Reply-To is given ${given.length} times with different values (${given.join(', ')}; header names are matched in any letter case): send one Reply-To; the command was not applied (the answer is also on the results subject)`,
  );
}

/**
 * 400 `invalid_command_id`: a header `spelling` that is `Nats-Msg-Id` in another letter case, and no
 * `Nats-Msg-Id`: JetStream de-duplicates on that exact spelling only, so the command had no id for
 * it (each copy sent would be stored and run again) and the answer would carry an id the client
 * never chose. Nothing is applied.
 */
export function misspelledCommandId(spelling: string): NatsCommandError {
  return new NatsCommandError(
    'invalid_command_id',
    `header ${quoteInput(spelling)} is not Nats-Msg-Id: JetStream de-duplicates commands on the header spelled exactly Nats-Msg-Id, and the service reads its command id there; send the id as Nats-Msg-Id (the command was not applied)`,
  );
}

/**
 * 400 `invalid_command_id`: with `API_KEYS`, a `Nats-Msg-Id` that does not start with
 * `<tenant>:`, or has nothing after it (every such command would share one id: JetStream would
 * drop all but the first within its duplicate window, and the service would answer each with the
 * first one's result). The command stream de-duplicates message ids across every tenant, so ids
 * are scoped by their tenant (docs/nats.md, "Tenants").
 */
export function invalidCommandId(msgId: string, tenant: string): NatsCommandError {
  const rule = `with API_KEYS each command id starts with its tenant and a colon (e.g. "${tenant}:<uuid>")`;
  return new NatsCommandError(
    'invalid_command_id',
    msgId === `${tenant}:`
      ? `Nats-Msg-Id ${quoteInput(msgId)} has no command id after "${tenant}:": ${rule}, and every command's id differs, since JetStream drops a command whose id was used in the last 2 minutes and a command is answered as the first with its id; the command was not applied`
      : `Nats-Msg-Id ${quoteInput(msgId)} does not start with "${tenant}:": ${rule}, since JetStream drops a command whose id any tenant used in the last 2 minutes; the command was not applied`,
  );
}

/**
 * 400 `invalid_command_id`: an event sent without an id takes `<Nats-Msg-Id>:<n>` (`derivedClientIds`), and that id,
 * `derived`, breaks the client id rule (`problem`, `clientIdProblem`'s: a control or invisible format character in the
 * `Nats-Msg-Id`; newcomer ncnats66 F2). Nothing is applied.
 */
export function commandIdMakesInvalidEventId(commandId: string, derived: string, problem: string): NatsCommandError {
  return new NatsCommandError(
    'invalid_command_id',
    `Nats-Msg-Id ${quoteInput(commandId)}: an event sent without an id takes "<Nats-Msg-Id>:<n>" as its id, and ${quoteInput(derived)} ${problem}; give each event an id, or use a Nats-Msg-Id without such characters (the command was not applied)`,
  );
}

/** 413 `payload_too_large`: the message of a `kind` command is larger than MAX_BODY_BYTES; what to do by kind (`tooLargeAdvice`, as over HTTP). */
export function payloadTooLarge(bytes: number, limit: number, kind: string): NatsCommandError {
  return new NatsCommandError(
    'payload_too_large',
    `message body is ${bytes} bytes, more than the limit of ${limit} (MAX_BODY_BYTES); ${tooLargeAdvice(kind, 'commands')}`,
  );
}

/**
 * 400 `malformed_json` / `malformed_body`: the body is not UTF-8 JSON. For `malformed_json`, `parseError` (what
 * `JSON.parse(text)` threw) and `text` say where it breaks ({@link malformedJsonMessage}); for `malformed_body`,
 * a `Content-Encoding` header, or else the body's bytes (`data`: gzip's magic bytes), tell a compressed one, which is said.
 */
export function malformedBody(
  code: 'malformed_json' | 'malformed_body',
  parseError?: unknown,
  text?: string,
  data?: Uint8Array,
  contentEncoding?: string | null,
): NatsCommandError {
  return new NatsCommandError(
    code,
    code === 'malformed_json'
      ? malformedJsonMessage('message body', parseError, text)
      : contentEncoding
        ? // a publisher that compresses as for HTTP and says so (newcomer ncverify71 F9)
          `the body is not valid UTF-8: it was sent with Content-Encoding ${JSON.stringify(contentEncoding.slice(0, 32))}; NATS commands are read as sent, never decompressed: send the JSON text, encoded as UTF-8, without Content-Encoding`
        : data !== undefined && data[0] === 0x1f && data[1] === 0x8b
          ? // gzip's magic bytes: a publisher that compresses as for HTTP (newcomer ncapi71 F7)
            'the body is not valid UTF-8: it is gzip-compressed (it starts with the bytes 1f 8b); NATS commands are read as sent, never decompressed: send the JSON text, encoded as UTF-8'
          : 'the body is not valid UTF-8: send JSON encoded as UTF-8',
  );
}

/** 400 `invalid_subject`: not `<prefix>.commands.<tenant>.<session>.<kind>`. */
export function invalidSubject(subject: string): NatsCommandError {
  return new NatsCommandError('invalid_subject', `subject ${quoteInput(subject)} is not <prefix>.commands.<tenant>.<session>.<compact|append|messages|policy>`);
}

/** What a NATS answer that tells the client to send the command again adds: a new id, else JetStream drops the resend unanswered. */
export const NEW_COMMAND_ID_ADVICE =
  'over NATS send it with a new Nats-Msg-Id: JetStream drops, unanswered, a command whose Nats-Msg-Id was used in the last 2 minutes (its duplicate window)';

/**
 * The error body of a NATS answer, `body` being the HTTP one (`{ code, message, ... }`): the same,
 * but for a refusal whose message tells the client to send it again or retry — 409 `session_erased`,
 * 409 `wrong_expected_revision`, 404 `session_not_found` of a compaction whose session was erased and
 * written again while it ran — whose message ends with {@link NEW_COMMAND_ID_ADVICE} (newcomer
 * ncnats73 F2: a resend under the same id within 2 minutes got no answer and was not applied). The
 * HTTP wording is unchanged.
 */
export function withNatsResendAdvice<B extends { code?: unknown; message?: unknown }>(body: B): B {
  const { code, message } = body;
  if (typeof message !== 'string') return body;
  const resend = code === 'session_erased' || code === 'wrong_expected_revision' || (code === 'session_not_found' && /send it again/i.test(message));
  return resend ? { ...body, message: `${message}; ${NEW_COMMAND_ID_ADVICE}` } : body;
}
