/**
 * `NATS_PREFIX` values that differ only in letter case or `-`/`_` map to the same stream names
 * (`team-a`, `team_a` and `TEAM-A` all give `TEAM_A_COMMANDS`, …; see `natsNames`), while their
 * subjects and consumers differ (newcomer ncnatsops F4). A second deployment on a shared server then
 * found the first one's stream, took it as its own, and failed to add its consumer with a raw
 * JetStream error, `multiple non-filtered consumers not allowed on workqueue stream`, naming neither
 * the other deployment nor the clash. These refusals say what clashed and what to do; they are
 * configuration errors (exit code 2 at start).
 */
import type { JetStreamManager } from '@nats-io/jetstream';
import { ConfigurationError } from '../config/configuration-error';
import type { NatsNames } from './nats-names';

/** JetStream API error code of a second consumer without a filter on a work-queue stream. */
export const WORKQUEUE_CONSUMER_TAKEN = 10099;

/** The streams `names` maps its prefix to, for the messages: `A_COMMANDS, A_RESULTS, A_DECISIONS`. */
function streamsOf(names: NatsNames): string {
  return `${names.commandStream}, ${names.resultStream}, ${names.decisionStream}`;
}

/** The prefix a stream's subjects were made for (`team-a.commands.>` → `team-a`), or null when they are not the service's. */
function prefixOfSubjects(subjects: readonly string[]): string | null {
  const match = subjects.map((s) => /^([A-Za-z0-9_-]+)\.(commands|results|decisions)\.>$/.exec(s)).find((m) => m !== null);
  return match ? match[1] : null;
}

/** The durable consumers of `stream` (names), or an empty list when they cannot be listed. */
export async function consumersOf(jsm: JetStreamManager, stream: string): Promise<string[]> {
  try {
    const found: string[] = [];
    for await (const c of jsm.consumers.list(stream)) found.push(c.name);
    return found;
  } catch {
    return [];
  }
}

/**
 * The refusal when the server's stream `stream` (one of `names`') does not take `expected`, the
 * subject this prefix publishes on, but `subjects`: another deployment's stream, its prefix differing
 * from `names.prefix` only in case or `-`/`_` (or a stream of that name made for something else);
 * `consumers` are the stream's consumers found (the other deployment's, e.g. `team_a-service`).
 */
export function streamTakenError(
  names: NatsNames,
  stream: string,
  expected: string,
  subjects: readonly string[],
  consumers: readonly string[],
): ConfigurationError {
  const other = prefixOfSubjects(subjects);
  const held = subjects.length > 0 ? `the subjects ${subjects.join(', ')}` : 'no subjects';
  const whose =
    other !== null
      ? `another deployment's, NATS_PREFIX=${other}${consumers.length > 0 ? ` (its consumer ${consumers.join(', ')})` : ''}: prefixes that differ only in letter case or - and _ map to the same stream names`
      : `not this service's${consumers.length > 0 ? ` (consumers ${consumers.join(', ')})` : ''}`;
  return new ConfigurationError({
    variable: 'NATS_PREFIX',
    value: names.prefix,
    problem: `it maps to the streams ${streamsOf(names)} (the prefix upper-cased, - as _), and the server's ${stream} takes ${held}, not ${expected}: it is ${whose}`,
    fix:
      other !== null
        ? `use a NATS_PREFIX whose upper-cased form (- as _) no other deployment on this server has, or NATS_PREFIX=${other} to be a replica of that deployment`
        : `use another NATS_PREFIX, or remove that stream if nothing uses it`,
  });
}

/**
 * The refusal when the command stream, its subjects this prefix's, already has consumers without a
 * filter (`consumers`) other than `names.commandConsumer`, so JetStream refuses the service's (a
 * work-queue stream allows only one): an operator's or another program's consumer on the service's
 * stream. `serverMessage` is JetStream's refusal.
 */
export function consumerTakenError(names: NatsNames, consumers: readonly string[], serverMessage: string): ConfigurationError {
  const others = consumers.filter((c) => c !== names.commandConsumer);
  const found = others.length > 0 ? `the consumer ${others.join(', ')}` : 'another consumer';
  return new ConfigurationError({
    variable: 'NATS_PREFIX',
    value: names.prefix,
    problem: `its command stream ${names.commandStream} already has ${found}, so JetStream refuses the service's consumer ${names.commandConsumer} (${serverMessage}: a work-queue stream allows one consumer without a filter)`,
    fix: `remove ${found} if nothing uses it (nats consumer rm ${names.commandStream} <name>: each command goes to one consumer of the stream, and the service must be that one), or use another NATS_PREFIX`,
  });
}
