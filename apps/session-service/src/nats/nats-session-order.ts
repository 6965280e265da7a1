/**
 * Stream order of a session's commands across replicas and crashes (README "Order"): a command is
 * applied only once no earlier command of its session is left in the command stream.
 *
 * The command stream is a work queue: a command stays in it until a replica acknowledges it or
 * terminates it (nats-server removes a terminated message of a work-queue stream as it does an
 * acknowledged one), so an earlier message of the session still there is one not applied yet: held
 * by another replica, by a replica that died (redelivered after the ack wait), or given back.
 */
import type { JetStreamManager, MsgRequest } from '@nats-io/jetstream';

/**
 * The subject filter of every command of the session `subject` names: the command subject with
 * its kind token replaced by `*` (`<prefix>.commands.<tenant>.<session>.*`; `*` is one token, so
 * a session `a` never matches the commands of a session `a.b`).
 */
export function sessionCommandFilter(subject: string): string {
  return `${subject.slice(0, subject.lastIndexOf('.'))}.*`;
}

/**
 * The stream sequence of the first message of `stream` on `filter` before `seq` that is still in
 * the stream, skipping those `finished` says this replica acknowledged or terminated already (an
 * acknowledgement is sent without waiting for the server: it may not have reached it yet); null
 * when there is none. One `STREAM.MSG.GET` (`next_by_subj`, nats-server 2.9 or later) in the
 * common case (the first message found is the command itself), one more per finished one skipped.
 * @throws the client's error when NATS is unreachable or the stream is missing.
 */
export async function earlierCommandInStream(
  jsm: JetStreamManager,
  stream: string,
  filter: string,
  seq: number,
  finished: (seq: number) => boolean = () => false,
): Promise<number | null> {
  let from = 1;
  for (;;) {
    // The client types only `seq` and `last_by_subj` here; the server also takes `next_by_subj` (next message on the filter from `seq`).
    const found = await jsm.streams.getMessage(stream, { seq: from, next_by_subj: filter } as unknown as MsgRequest);
    if (!found || found.seq >= seq) return null;
    if (!finished(found.seq)) return found.seq;
    from = found.seq + 1;
  }
}

/**
 * The last `capacity` stream sequences a replica acknowledged or terminated, for
 * {@link earlierCommandInStream}'s `finished` (oldest forgotten first).
 */
export class FinishedSequences {
  private readonly seqs = new Set<number>();
  constructor(private readonly capacity = 4096) {}

  /** Records `seq`. */
  add(seq: number): void {
    this.seqs.add(seq);
    if (this.seqs.size > this.capacity) this.seqs.delete(this.seqs.values().next().value as number);
  }

  /** True when `seq` was recorded (and not forgotten since). */
  has(seq: number): boolean {
    return this.seqs.has(seq);
  }
}
