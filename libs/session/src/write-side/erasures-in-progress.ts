/**
 * The erasures running in this process, by session key, so that this process's appends to a
 * session wait for its erasure instead of racing it: an erasure deletes the stream at the revision
 * it just read, and an append landing in between makes it read and delete again, up to 8 times
 * before it answers 409 `erasure_interrupted`. A burst of 8 appends sent to one replica with a
 * `DELETE` did that (newcomer ncapi73 F5). An append that starts while an erasure of its session
 * runs here waits for it, then meets its life-at-arrival check (409 `session_erased`: it arrived
 * in the life the erasure ended) or writes in the session's next life. Only the one append already
 * writing when the erasure began can still race it; writers on other replicas race as before.
 */
export class ErasuresInProgress {
  /** The erasures running, by session key (several erasures of one session may run at once). */
  private readonly running = new Map<string, Set<Promise<unknown>>>();

  /**
   * Runs `erasure` of the session `key` (`sessionKey`) and answers its outcome; appends of that
   * session that ask {@link settled} meanwhile wait for it. Rejects as `erasure` does.
   */
  async run<T>(key: string, erasure: () => Promise<T>): Promise<T> {
    const done = erasure();
    const running = this.running.get(key) ?? new Set<Promise<unknown>>();
    running.add(done);
    this.running.set(key, running);
    try {
      return await done;
    } finally {
      running.delete(done);
      if (running.size === 0 && this.running.get(key) === running) this.running.delete(key);
    }
  }

  /**
   * A promise that resolves once the erasures of session `key` running now in this process have
   * ended (never rejects), or undefined when none runs: nothing to wait for, not even a turn.
   */
  settled(key: string): Promise<unknown> | undefined {
    const running = this.running.get(key);
    return running ? Promise.allSettled([...running]) : undefined;
  }
}
