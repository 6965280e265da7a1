/**
 * The one log line of a rejected NATS command (a command answered with an error and terminated:
 * any 4xx, or a 5xx after its last delivery). Over NATS nobody may be listening for the answer —
 * a subject that names no session has no results subject, and `Reply-To` is optional — so this
 * line, at warn, is where an operator sees every rejection. It names the error code and status,
 * the subject and the `Nats-Msg-Id` (both client input, quoted and cut by `quoteInput`), the
 * delivery count when above 1, where the answer went and a refused `Reply-To` (quoted and cut); never the payload or the error's
 * message (which may repeat client input at length). At most a few hundred characters.
 */
import { quoteInput } from '@lib/compaction';

/** Where a rejected command's answer was published. */
export interface RejectionDestinations {
  /** On `<prefix>.results.<tenant>.<session>` (the subject named a tenant and a session). */
  results: boolean;
  /** On the subject in the command's `Reply-To` header. */
  replyTo: boolean;
  /** The command's `Reply-To` when it was not a reply subject (`replyToProblem`): nothing was published there. */
  refusedReplyTo?: string;
}

/** What {@link rejectionLogLine} says about one rejected command. */
export interface RejectedCommand {
  /** The error's `code` (e.g. `invalid_subject`), or `unknown` when the answer has none. */
  code: string;
  /** The HTTP-equivalent status (400–599). */
  status: number;
  /** The subject the command was published on. */
  subject: string;
  /** The publisher's `Nats-Msg-Id`, or null when it gave none. */
  msgId: string | null;
  /** JetStream's delivery count (1 on the first delivery). */
  deliveryCount: number;
  published: RejectionDestinations;
}

/**
 * `command rejected: <code> (<status>), subject "<subject>", Nats-Msg-Id "<id>"[, delivery <n>];
 * answer published on <the results subject|Reply-To|…>` — or `…; no answer published (…): this
 * line is its only record` when the answer went nowhere.
 */
export function rejectionLogLine(command: RejectedCommand): string {
  const id = command.msgId ? `Nats-Msg-Id ${quoteInput(command.msgId)}` : 'no Nats-Msg-Id';
  const delivery = command.deliveryCount > 1 ? `, delivery ${command.deliveryCount}` : '';
  const where = [command.published.results ? 'the results subject' : null, command.published.replyTo ? 'Reply-To' : null].filter(Boolean);
  const refused = command.published.refusedReplyTo;
  const answer =
    where.length > 0
      ? `answer published on ${where.join(' and ')}`
      : `no answer published (no session in the subject, ${refused === undefined ? 'no Reply-To' : 'Reply-To refused'}): this line is its only record`;
  const refusal = refused === undefined ? '' : `; nothing published on Reply-To ${quoteInput(refused)} (not a reply subject)`;
  return `command rejected: ${quoteInput(command.code, { quoted: false })} (${command.status}), subject ${quoteInput(command.subject)}, ${id}${delivery}; ${answer}${refusal}`;
}
