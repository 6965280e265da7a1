/**
 * Creates the transport's JetStream streams and the shared durable consumer when they are missing
 * (every replica does this at start; creating what exists with the same settings is harmless).
 */
import { nanos } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, RetentionPolicy, StorageType, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import type { NatsNames } from './nats-names';

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
 * Adds whichever stream or the command consumer is missing.
 * `ackWaitMs`: how long a delivered command may stay unacknowledged before it goes to another
 * replica (a handler still working extends it).
 * @throws the server's error when a name is taken with other subjects.
 */
export async function ensureStreams(jsm: JetStreamManager, names: NatsNames, ackWaitMs: number): Promise<void> {
  for (const config of streamConfigs(names)) {
    try {
      await jsm.streams.info(config.name);
    } catch {
      await jsm.streams.add(config);
    }
  }
  try {
    await jsm.consumers.info(names.commandStream, names.commandConsumer);
  } catch {
    await jsm.consumers.add(names.commandStream, {
      durable_name: names.commandConsumer,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: nanos(ackWaitMs),
    });
  }
}
