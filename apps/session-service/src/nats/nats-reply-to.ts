/**
 * Where a command's answer may go besides its results subject: the subject in the command's
 * `Reply-To` header, when it is a reply subject. The service publishes as its own NATS user, which
 * owns the streams and has JetStream API rights, so an unchecked `Reply-To` would let any publisher
 * of commands write where only the service may: another tenant's command subject (its answer, a
 * JSON body, then runs as that tenant's command), the results and decisions subjects (forged
 * answers and decisions), or `$JS.API.STREAM.PURGE.<stream>` (every tenant's queued commands lost).
 *
 * The rule, one function ({@link replyToProblem}) that the executor (which rejects the command)
 * and the consumer (which publishes) both call: a `Reply-To` is a literal subject (no wildcard, no
 * empty token, no space or control character) under one of the allowed prefixes
 * (`NATS_REPLY_PREFIXES`, default `_INBOX`: the inboxes NATS clients create for replies), never a
 * `$` subject (`$JS.…`, `$SYS.…`, `$KV.…`: server APIs), and never under the service's own
 * `<NATS_PREFIX>.` (its commands, results and decisions). The setting itself may name neither.
 */
import { ConfigurationError } from '../config/configuration-error';

/** Default `NATS_REPLY_PREFIXES`: reply inboxes (`createInbox()` makes `_INBOX.<nuid>`). */
export const DEFAULT_REPLY_PREFIXES: readonly string[] = ['_INBOX'];

/** What a `Reply-To` is checked against. */
export interface ReplyToRule {
  /** `NATS_PREFIX`: no answer goes to `<prefix>` or under `<prefix>.`. */
  prefix: string;
  /** Subject prefixes, whole tokens without the trailing dot (e.g. `_INBOX`, `replies.tenant-a`): a reply subject is under one. */
  allowedPrefixes: readonly string[];
}

/** A subject token a reply subject may hold: printable, no space, no wildcard, not empty. */
const TOKEN = /^[^\s*>.\u0000-\u001f\u007f]+$/;

/** True when `subject` is literal (non-empty tokens of printable characters, no wildcard, no space). */
function isLiteralSubject(subject: string): boolean {
  return subject.split('.').every((token) => TOKEN.test(token));
}

/**
 * Null when an answer may be published on `replyTo` under `rule`; else what is wrong with it (a
 * phrase, e.g. `is a $ subject (a NATS server API)`), for the error message and the log line.
 */
export function replyToProblem(replyTo: string, rule: ReplyToRule): string | null {
  if (replyTo === '') return 'is empty';
  if (!isLiteralSubject(replyTo)) return 'is not a literal subject (an empty token, a wildcard, a space or a control character)';
  if (replyTo.startsWith('$')) return 'is a $ subject (a NATS server API)';
  if (replyTo === rule.prefix || replyTo.startsWith(`${rule.prefix}.`)) return `is under "${rule.prefix}." (the service's own commands, results and decisions)`;
  if (!rule.allowedPrefixes.some((p) => replyTo.startsWith(`${p}.`))) {
    return `is not under ${rule.allowedPrefixes.map((p) => `"${p}."`).join(' or ')} (NATS_REPLY_PREFIXES)`;
  }
  return null;
}

/**
 * Reads `NATS_REPLY_PREFIXES`: comma-separated subject prefixes (whole tokens; a trailing `.` is
 * dropped), default {@link DEFAULT_REPLY_PREFIXES}.
 * @throws ConfigurationError for an empty list or entry, a wildcard or empty token, a `$` prefix,
 *   or one that covers the service's own subjects (first token equal to `natsPrefix`).
 */
export function parseReplyPrefixes(raw: string | undefined, natsPrefix: string): string[] {
  if (raw === undefined) return [...DEFAULT_REPLY_PREFIXES];
  const fix = `use comma-separated subject prefixes for reply inboxes, e.g. _INBOX or _INBOX,replies.tenant-a (not $ subjects, not under ${natsPrefix}.)`;
  const entries = raw.split(',').map((e) => e.trim().replace(/\.$/, ''));
  for (const entry of entries) {
    const problem =
      entry === ''
        ? 'holds an empty entry'
        : !isLiteralSubject(entry)
          ? `${JSON.stringify(entry)} is not a literal subject prefix`
          : entry.startsWith('$')
            ? `${JSON.stringify(entry)} is a $ subject (a NATS server API)`
            : entry.split('.')[0] === natsPrefix
              ? `${JSON.stringify(entry)} is under NATS_PREFIX (the service's own commands, results and decisions)`
              : null;
    if (problem) throw new ConfigurationError({ variable: 'NATS_REPLY_PREFIXES', value: raw, problem, fix });
  }
  return entries;
}
