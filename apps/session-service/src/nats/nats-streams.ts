/**
 * Creates the transport's JetStream streams and the shared durable consumer when they are missing
 * (every replica does this at start; creating what exists with the same settings is harmless).
 */
import { nanos } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, JetStreamApiError, RetentionPolicy, StorageType, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import type { NatsNames } from './nats-names';
import { consumersOf, consumerTakenError, streamTakenError, WORKQUEUE_CONSUMER_TAKEN } from './nats-prefix-clash';

/** How long JetStream remembers a `Nats-Msg-Id` to drop a re-published duplicate (ms). */
export const DUPLICATE_WINDOW_MS = 2 * 60_000;
/** How long results are kept for callers that read them later (ms). */
export const RESULT_MAX_AGE_MS = 24 * 3600_000;

/** Stream settings of the three streams. */
export function streamConfigs(names: NatsNames): Array<Partial<StreamConfig> & { name: string }> {
  const p = names.prefix;
  const common = { storage: StorageType.File, duplicate_window: nanos(DUPLICATE_WINDOW_MS) };
  return [
    { ...common, name: names.commandStream, subjects: [`${p}.commands.>`], retention: RetentionPolicy.Workqueue },
    { ...common, name: names.resultStream, subjects: [`${p}.results.>`], retention: RetentionPolicy.Limits, max_age: nanos(RESULT_MAX_AGE_MS) },
    { ...common, name: names.decisionStream, subjects: [`${p}.decisions.>`], retention: RetentionPolicy.Limits },
  ];
}

/**
 * What {@link ensureStreams} found of the command consumer's ack wait (ms): `configured` is
 * `NATS_ACK_WAIT_MS`; `found` the existing consumer's (null when it was created now); `inEffect`
 * the consumer's after the call (`configured` unless the server refused to update it);
 * `refusal` the server's error message when it did; `created` the names of the streams and of the
 * consumer that were missing and were added now (empty when all were there).
 */
export interface AckWaitCheck {
  configured: number;
  found: number | null;
  inEffect: number;
  refusal: string | null;
  created: string[];
}

/**
 * True when `err` says a stream or the consumer is not on the server: `stream not found`,
 * `consumer not found`, or what a publish to a subject no stream listens on gets
 * (`jetstream is not enabled`, `no responders`): the server lost them (an empty store, a
 * `nats stream rm`), or runs without JetStream (then re-creating them fails with the same).
 */
export function isMissingStreamError(err: unknown): boolean {
  const message = err instanceof Error ? err.message : String(err);
  return /stream not found|consumer not found|jetstream is not enabled|no responders/i.test(message);
}

/** A consumer's `ack_wait` (nanoseconds, as JetStream gives it) in ms. */
export function ackWaitMsOf(ackWaitNanos: number): number {
  return Math.round(ackWaitNanos / 1e6);
}

/**
 * How long (ms) {@link ensureStreams} waits, when it finds a stream or the consumer gone while the
 * service runs (met missing by the consumer or the feed: a `nats stream rm`), before it looks again
 * and re-creates it. nats-server 2.9.10 tells the consumer's pull request `409 Consumer Deleted`
 * before it has removed the deleted stream's folder; a stream of the same name created within that
 * time (about 100 ms after the 409) has its folder removed by the deletion still under way: it
 * accepts and lists messages but never delivers them (or logs `error opening msg block file`).
 * Measured (natssettle brief): 16 of 39 rounds broken when re-created at once, 0 of 40 (0 of 30
 * under load) after 1 s.
 */
export const STREAM_SETTLE_MS = 1000;

/**
 * Why the streams are ensured: `start` (the first connection), `reconnect` (the connection came
 * back: the server may have lost its store, no deletion is under way) or `met-missing` (the
 * consumer or the feed met a stream or the consumer missing while running: a deletion may still be
 * under way on the server).
 */
export type EnsureCause = 'start' | 'reconnect' | 'met-missing';

/** The settle wait (ms) before re-creating what is missing, by cause: {@link STREAM_SETTLE_MS} for `met-missing`, else 0. */
export function settleMsFor(cause: EnsureCause): number {
  return cause === 'met-missing' ? STREAM_SETTLE_MS : 0;
}

/** Options of {@link ensureStreams}. */
export interface EnsureOptions {
  /**
   * Wait this long (ms) before re-creating what is missing, and look it up again after the wait
   * (another replica may have re-created it meanwhile): {@link STREAM_SETTLE_MS} when it was met
   * missing while the service runs; 0 (the default) at start and after a reconnect, where no deletion is under way.
   */
  settleMs?: number;
  /** Waits `ms` (tests replace it); `setTimeout` by default. */
  sleep?: (ms: number) => Promise<void>;
}

/** Waits `ms` milliseconds. */
function sleepFor(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** True when `jsm` finds `name` (a stream), or with `consumer` that consumer of it; false on any error. */
async function isThere(jsm: JetStreamManager, name: string, consumer?: string): Promise<boolean> {
  try {
    await (consumer === undefined ? jsm.streams.info(name) : jsm.consumers.info(name, consumer));
    return true;
  } catch {
    return false;
  }
}

/**
 * Adds whichever stream or the command consumer is missing (at start, and again whenever they may
 * have been lost: after a reconnect, or when the consumer or the feed met one missing). With
 * `options.settleMs` (met missing while running: see {@link STREAM_SETTLE_MS}), when anything is
 * missing it first waits that long, then looks every one up again and creates only what is still missing.
 * `ackWaitMs`: how long a delivered command may stay unacknowledged before it goes to another
 * replica (a handler still working extends it). An existing consumer created with another ack wait
 * (an earlier start with another `NATS_ACK_WAIT_MS`) is updated to `ackWaitMs` (nats-server 2.9
 * allows it); when the server refuses, the consumer keeps its own, which is what then applies
 * (the result says which, for the caller's one warn line).
 * @throws ConfigurationError (`NATS_PREFIX`) when a stream of these names exists with other subjects
 *   (another deployment whose prefix differs only in case or `-`/`_`: {@link streamTakenError}), or
 *   JetStream refuses the consumer because the command stream has another one without a filter
 *   ({@link consumerTakenError}); the server's error for anything else it refuses.
 */
export async function ensureStreams(jsm: JetStreamManager, names: NatsNames, ackWaitMs: number, options: EnsureOptions = {}): Promise<AckWaitCheck> {
  const settleMs = options.settleMs ?? 0;
  if (settleMs > 0) {
    const there = await Promise.all([...streamConfigs(names).map((c) => isThere(jsm, c.name)), isThere(jsm, names.commandStream, names.commandConsumer)]);
    // A deletion may still be removing the old stream's files: a stream created now could lose its own.
    if (there.includes(false)) await (options.sleep ?? sleepFor)(settleMs);
  }
  const created: string[] = [];
  for (const config of streamConfigs(names)) {
    let subjects: readonly string[];
    try {
      subjects = (await jsm.streams.info(config.name)).config.subjects ?? [];
    } catch {
      await jsm.streams.add(config);
      created.push(config.name);
      continue;
    }
    // Found: made for this prefix, or another deployment's of the same stream name (its prefix differing in case or -/_)?
    const expected = config.subjects![0];
    if (!subjects.includes(expected)) throw streamTakenError(names, config.name, expected, subjects, await consumersOf(jsm, config.name));
  }
  let found: number;
  try {
    found = ackWaitMsOf((await jsm.consumers.info(names.commandStream, names.commandConsumer)).config.ack_wait ?? 0);
  } catch {
    try {
      await jsm.consumers.add(names.commandStream, {
        durable_name: names.commandConsumer,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: nanos(ackWaitMs),
      });
    } catch (err) {
      if (err instanceof JetStreamApiError && err.code === WORKQUEUE_CONSUMER_TAKEN) {
        throw consumerTakenError(names, await consumersOf(jsm, names.commandStream), err.message);
      }
      throw err;
    }
    created.push(names.commandConsumer);
    return { configured: ackWaitMs, found: null, inEffect: ackWaitMs, refusal: null, created };
  }
  if (found === ackWaitMs) return { configured: ackWaitMs, found, inEffect: ackWaitMs, refusal: null, created };
  try {
    const updated = await jsm.consumers.update(names.commandStream, names.commandConsumer, { ack_wait: nanos(ackWaitMs) });
    return { configured: ackWaitMs, found, inEffect: ackWaitMsOf(updated.config.ack_wait ?? 0), refusal: null, created };
  } catch (err) {
    return { configured: ackWaitMs, found, inEffect: found, refusal: (err as Error).message, created };
  }
}

/**
 * The one start-up warn line when the consumer's ack wait differed from `NATS_ACK_WAIT_MS`
 * (null when it did not): names both values (ms) and the one in effect.
 */
export function ackWaitLine(consumer: string, check: AckWaitCheck): string | null {
  if (check.found === null || check.found === check.configured) return null;
  const head = `NATS consumer ${consumer} had ack_wait ${check.found} ms, NATS_ACK_WAIT_MS is ${check.configured} ms`;
  if (check.refusal === null) return `${head}: consumer updated, ${check.inEffect} ms in effect`;
  return `${head}: the server refused the update (${check.refusal}), the consumer's ${check.inEffect} ms stays in effect`;
}
