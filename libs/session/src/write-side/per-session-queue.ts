/**
 * Runs the write commands of one session one after another within this process, in arrival
 * order, while commands of different sessions run concurrently. Two appends to the same session
 * that load the same revision would otherwise race: only one can be written at that expected
 * revision, the other reloads and decides again, and with many concurrent writers on one hot
 * session a request could lose every retry. In one process they now queue instead; writers in
 * other processes still meet the expected-revision check and retry. `SessionModule` provides one
 * instance that the append and policy handlers share, so a policy PUT queues behind the appends of
 * its session that came before it too (and they behind it). A queued task must never wait for
 * anything queued behind it in the same instance (a deadlock): erasures, which appends and PUTs
 * wait for, do not queue here.
 */
export class PerSessionQueue {
  /** The last queued run of each session with one in flight (removed when it settles and nothing queued after it). */
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Sessions with a run in flight or queued. */
  get activeSessions(): number {
    return this.tails.size;
  }

  /**
   * Runs `task` after every task queued before it for `sessionKey` has settled (fulfilled or
   * rejected); resolves or rejects with `task`'s own outcome.
   */
  run<T>(sessionKey: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(sessionKey);
    const result = previous ? previous.then(task, task) : task();
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(sessionKey, tail);
    void tail.then(() => {
      if (this.tails.get(sessionKey) === tail) this.tails.delete(sessionKey);
    });
    return result;
  }
}
