/**
 * Promises waiting for a checkpoint to reach a global position (read-your-writes). The owner
 * calls {@link notify} after each committed checkpoint move.
 */
export class PositionWaiters {
  private readonly waiters = new Set<{ position: bigint; resolve: (reached: boolean) => void; timer: NodeJS.Timeout }>();

  /**
   * Resolves `true` as soon as `current()` ≥ `position` (immediately when it already is), or
   * `false` after `timeoutMs` milliseconds. Never rejects. `position` is a bigint global position.
   */
  wait(position: bigint, timeoutMs: number, current: () => bigint): Promise<boolean> {
    if (current() >= position) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const waiter = {
        position,
        resolve: (reached: boolean) => {
          clearTimeout(waiter.timer);
          this.waiters.delete(waiter);
          resolve(reached);
        },
        timer: setTimeout(() => waiter.resolve(false), Math.max(0, timeoutMs)),
      };
      this.waiters.add(waiter);
    });
  }

  /** How many promises are still waiting. */
  get size(): number {
    return this.waiters.size;
  }

  /** Resolves every waiter whose position is ≤ `checkpoint` (bigint). */
  notify(checkpoint: bigint): void {
    for (const waiter of [...this.waiters]) if (waiter.position <= checkpoint) waiter.resolve(true);
  }

  /** Resolves every waiter with `false` (shutdown). */
  cancelAll(): void {
    for (const waiter of [...this.waiters]) waiter.resolve(false);
  }
}
