/**
 * Finds the answer the service already published for a command on the results stream (docs/nats.md,
 * "Redelivery"): a redelivered command (its replica died or lost NATS after publishing the answer,
 * before the acknowledgement reached the server) is answered again with it, not run again on the
 * session's later state; a client whose publish acknowledgement was lost, and that resent the
 * command with the same `Nats-Msg-Id` (which JetStream drops as a duplicate), reads its answer the
 * same way.
 */
import { nanos } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { MsgHdrs } from '@nats-io/transport-node';

/** An answer read back from the results stream. */
export interface PublishedAnswer {
  /** Its headers as published (`Status`, `Command-Id`, `Delivery-Count`, ..., `Nats-Msg-Id`). */
  headers: MsgHdrs;
  /** Its body (JSON bytes), as published. */
  data: Uint8Array;
  /** Its sequence in the results stream. */
  seq: number;
}

/** How far before the command's own stream time the search starts (ms): clocks of the servers of a cluster differ a little. */
export const CLOCK_MARGIN_MS = 5_000;

/**
 * The message of `stream` (the results stream) on `subject` (`<prefix>.results.<tenant>.<session>`)
 * whose `Nats-Msg-Id` is `msgId` (`result:<tenant>/<session>/<commandId>`), among those stored from
 * `since` (the command's stream time; answers come after their command) less {@link CLOCK_MARGIN_MS};
 * null when there is none (never answered, or older than the stream's `max_age`). Reads them with
 * an ephemeral consumer (memory storage, no acknowledgement) deleted afterwards: four JetStream
 * requests, plus one per 256 answers of the session since `since`.
 * @throws the client's error when NATS is unreachable or the stream is missing.
 */
export async function findPublishedAnswer(
  js: JetStreamClient,
  jsm: JetStreamManager,
  stream: string,
  subject: string,
  msgId: string,
  since: Date,
): Promise<PublishedAnswer | null> {
  const info = await jsm.consumers.add(stream, {
    ack_policy: AckPolicy.None,
    deliver_policy: DeliverPolicy.StartTime,
    opt_start_time: new Date(since.getTime() - CLOCK_MARGIN_MS).toISOString(),
    filter_subject: subject,
    mem_storage: true,
    inactive_threshold: nanos(60_000),
  });
  try {
    let left = info.num_pending;
    if (left === 0) return null;
    const consumer = await js.consumers.get(stream, info.name);
    while (left > 0) {
      const batch = await consumer.fetch({ max_messages: Math.min(left, 256), expires: 5_000 });
      let got = 0;
      for await (const m of batch) {
        got++;
        left--;
        if (m.headers?.get('Nats-Msg-Id') === msgId) return { headers: m.headers, data: m.data, seq: m.seq };
      }
      if (got === 0) return null;
    }
    return null;
  } finally {
    await jsm.consumers.delete(stream, info.name).catch(() => undefined);
  }
}
