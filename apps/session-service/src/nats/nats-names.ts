/**
 * Subjects and JetStream names of the NATS transport, all derived from one prefix (`NATS_PREFIX`,
 * default `compaction`):
 * - commands `<prefix>.commands.<tenant>.<session>.<compact|append|messages|policy>` (stream
 *   `<PREFIX>_COMMANDS`, work-queue retention, durable consumer `<prefix>-service`);
 * - results `<prefix>.results.<tenant>.<session>` (stream `<PREFIX>_RESULTS`);
 * - decisions `<prefix>.decisions.<tenant>.<session>` (stream `<PREFIX>_DECISIONS`).
 *
 * Tenant ids never contain a dot; session ids may (`a.b` spans two subject tokens), so a session is
 * every token between the tenant and the last token.
 */

/** The command kinds, each the body of one HTTP request (see docs/nats.md). */
export const COMMAND_KINDS = ['compact', 'append', 'messages', 'policy'] as const;
/** One of {@link COMMAND_KINDS}. */
export type CommandKind = (typeof COMMAND_KINDS)[number];

/**
 * The command id of a command published without `Nats-Msg-Id`: `<command stream>:<stream
 * sequence>:<stored time>`, the stored time in nanoseconds since the epoch (as JetStream gives it
 * with every delivery: `JsMsg.info.timestampNanos`, or `storedTimestampNanos` of a stored
 * message), e.g. `SMC_COMMANDS:1:1796300000123456800`. Every delivery of one stored command gets
 * the same id (its redeliveries are answered from what it did); a command of a later life of the
 * stream (deleted and re-created: sequences start at 1 again) gets another one, as the time it was
 * stored differs, so it is never taken for a finished command of the earlier life (newcomer
 * ncnatsint F2: the id was `<stream>:<sequence>`). Its events sent without an id get
 * `<command id>:<n>` (see `derivedClientIds`).
 */
export function derivedCommandId(commandStream: string, streamSequence: number, storedNanos: number): string {
  return `${commandStream}:${streamSequence}:${storedNanos}`;
}

/** Subjects, stream and consumer names for one prefix. */
export interface NatsNames {
  prefix: string;
  commandStream: string;
  resultStream: string;
  decisionStream: string;
  /** Durable pull consumer on the command stream, shared by every replica. */
  commandConsumer: string;
}

/** The names for `prefix` (letters, digits, `_`, `-`). */
export function natsNames(prefix: string): NatsNames {
  const upper = prefix.toUpperCase().replace(/-/g, '_');
  return {
    prefix,
    commandStream: `${upper}_COMMANDS`,
    resultStream: `${upper}_RESULTS`,
    decisionStream: `${upper}_DECISIONS`,
    commandConsumer: `${prefix}-service`,
  };
}

/** Header of every decisions-feed message carrying its global log position (decimal string). */
export const LOG_POSITION_HEADER = 'Log-Position';

/**
 * Header of every decisions-feed message naming the event it was published for, in its log:
 * `<stream>@<revision> <event id> <recorded at, ISO-8601>` (`checkpointEventIdentity`), so the feed
 * can tell its stream's messages of another log (a store restored from a backup, another store)
 * from this log's. Absent from messages published by releases before it.
 */
export const LOG_EVENT_HEADER = 'Log-Event';

/** `<prefix>.commands.<tenant>.<session>.<kind>` */
export function commandSubject(prefix: string, tenant: string, sessionId: string, kind: string): string {
  return `${prefix}.commands.${tenant}.${sessionId}.${kind}`;
}

/** `<prefix>.results.<tenant>.<session>` */
export function resultSubject(prefix: string, tenant: string, sessionId: string): string {
  return `${prefix}.results.${tenant}.${sessionId}`;
}

/**
 * The subject tokens of a session id: the id itself, or — for an id with an empty dot-separated
 * part (`a..b`, `.a`, `a.`, valid over HTTP but not as subject tokens) — `%` followed by the
 * id in base64url (`%` never occurs in a session id, so the two forms cannot collide).
 */
export function sessionTokens(sessionId: string): string {
  return sessionId.split('.').every((part) => part.length > 0) ? sessionId : `%${Buffer.from(sessionId, 'utf8').toString('base64url')}`;
}

/** `<prefix>.decisions.<tenant>.<session>` (see {@link sessionTokens}) */
export function decisionSubject(prefix: string, tenant: string, sessionId: string): string {
  return `${prefix}.decisions.${tenant}.${sessionTokens(sessionId)}`;
}

/** The parts of a command subject (not yet checked: the kind may be unknown, the session id invalid). */
export interface CommandAddress {
  tenant: string;
  sessionId: string;
  kind: string;
}

/**
 * Whether `address` names one session literally: neither its tenant nor a token of its session id is a NATS wildcard
 * (`*`, `>`; a subject of them is captured by the command stream as it is). An address that does not has no results
 * subject: its answer on `<prefix>.results.<tenant>.<session>` would be on a wildcard subject, which every subscriber to
 * the tenant's results would get (newcomer ncnats66 F4).
 */
export function namesOneSession(address: Pick<CommandAddress, 'tenant' | 'sessionId'>): boolean {
  return ![address.tenant, ...address.sessionId.split('.')].some((token) => token === '*' || token === '>');
}

/** Splits a command subject, or returns null when it has fewer than five tokens or another prefix. */
export function parseCommandSubject(prefix: string, subject: string): CommandAddress | null {
  const tokens = subject.split('.');
  if (tokens.length < 5 || tokens[0] !== prefix || tokens[1] !== 'commands') return null;
  return { tenant: tokens[2], sessionId: tokens.slice(3, -1).join('.'), kind: tokens[tokens.length - 1] };
}
