/**
 * The headers the service reads from a command, read the way a client expects (newcomer ncnatsops
 * F3: a `reply-to` or `REPLY-TO` header was ignored without a word, the command applied, nothing
 * sent to the inbox where the client waited; nats.js and nats-py keep a header's name as written):
 * - `Reply-To` is the service's own header: its name is matched in any letter case, as HTTP
 *   matches header names. Given twice (in one spelling or several) with different values, or
 *   empty, it is refused (`invalid_reply_to`), never guessed at or dropped;
 * - `Nats-Msg-Id` is JetStream's: the server de-duplicates on that exact spelling only (a command
 *   sent with `nats-msg-id` is stored again each time it is sent: checked on nats-server 2.9.10), so
 *   a look-alike spelling without the exact one is refused (`invalid_command_id`) naming the
 *   spelling to use, rather than run as a command without an id, whose answer would carry an id
 *   the client never chose.
 */
import type { MsgHdrs } from '@nats-io/transport-node';

/** Header naming the subject that also receives the answer (JetStream keeps no reply subject); read in any letter case. */
export const REPLY_TO_HEADER = 'Reply-To';
/** JetStream's message-id header, the command id (read in this exact spelling, as JetStream does). */
export const MSG_ID_HEADER = 'Nats-Msg-Id';

/** What a command's headers say ({@link readCommandHeaders}). */
export interface CommandHeaders {
  /** `Nats-Msg-Id` (exact spelling), null when absent or empty. */
  msgId: string | null;
  /** The `Reply-To` value (its name in any case), null when none; `''` when given empty. Null too when {@link replyToConflict} is set. */
  replyTo: string | null;
  /** Set when `Reply-To` is given more than once with different values: each value, with the header's spelling (`reply-to: "_INBOX.a"`). */
  replyToConflict: string[] | null;
  /** Set when there is no `Nats-Msg-Id` but a header whose name is it in another letter case: that spelling (e.g. `nats-msg-id`). */
  msgIdSpelling: string | null;
  /** The `Content-Encoding` value (its name in any case), null when none: the service never decompresses a command, so it only names it when the body is not UTF-8. */
  contentEncoding: string | null;
}

/** Reads `headers` (absent: a command without headers) as described in the module doc. */
export function readCommandHeaders(headers: MsgHdrs | undefined): CommandHeaders {
  const replyTo: Array<{ name: string; value: string }> = [];
  let msgId: string | null = null;
  let msgIdSpelling: string | null = null;
  let contentEncoding: string | null = null;
  for (const [name, values] of headers ?? []) {
    const lower = name.toLowerCase();
    if (lower === 'content-encoding') contentEncoding ??= values[0]?.trim() || null;
    if (lower === REPLY_TO_HEADER.toLowerCase()) for (const value of values) replyTo.push({ name, value: value.trim() });
    else if (name === MSG_ID_HEADER) msgId = values[0] || null;
    else if (lower === MSG_ID_HEADER.toLowerCase()) msgIdSpelling ??= name;
  }
  const distinct = new Set(replyTo.map((r) => r.value));
  return {
    msgId,
    replyTo: distinct.size === 1 ? replyTo[0].value : null,
    replyToConflict: distinct.size > 1 ? replyTo.map((r) => `${r.name}: ${JSON.stringify(r.value)}`) : null,
    msgIdSpelling: msgId === null ? msgIdSpelling : null,
    contentEncoding,
  };
}
