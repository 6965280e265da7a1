/**
 * The store's head as `/health` and `/metrics` read it: never waiting longer than {@link HEAD_ANSWER_MS}, so that
 * liveness answers promptly whatever the store does (a frozen server or a network partition holds a pooled
 * connection's query for ever: no client-side bound applies to it).
 */

/**
 * Longest time (ms) `/health` and `/metrics` wait for the store's head before saying the store does not answer:
 * half of kubelet's default probe timeout (1 s), so a liveness probe gets its answer in time.
 */
export const HEAD_ANSWER_MS = 500;

/**
 * Reads the head through `read` at most once at a time: a caller arriving while a read is still unanswered
 * waits on that same read (probes every few seconds never pile reads up on a store that does not answer),
 * and at most until `withinMs` after that read started: once a read has gone unanswered that long, every
 * caller is told at once that the store does not answer, until the read settles.
 */
export class BoundedHead {
  private inFlight: Promise<bigint> | null = null;
  /** When (Date.now(), ms) {@link inFlight} started. */
  private startedAt = 0;

  constructor(
    private readonly read: () => Promise<bigint>,
    private readonly withinMs: number = HEAD_ANSWER_MS,
  ) {}

  /**
   * The store's head (bigint).
   * @throws the read's own error; or Error `the event store did not answer within <ms> ms …` when it did not answer in time.
   */
  async head(): Promise<bigint> {
    let read = this.inFlight;
    if (!read) {
      const started = this.read();
      read = started;
      this.inFlight = started;
      this.startedAt = Date.now();
      const done = (): void => {
        if (this.inFlight === started) this.inFlight = null;
      };
      started.then(done, done);
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`the event store did not answer within ${this.withinMs} ms (a server that does not answer: frozen, overloaded or cut off)`)),
        Math.max(0, this.startedAt + this.withinMs - Date.now()),
      );
    });
    try {
      return await Promise.race([read, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}
