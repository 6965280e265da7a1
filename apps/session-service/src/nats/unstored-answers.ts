/**
 * The commands a replica left for redelivery because their answer could not be stored on (or
 * looked up in) the results stream, by command id, each counted until a time of its own (its
 * redelivery delay plus an ack wait: a command another replica finished meanwhile is forgotten
 * then). `/health` `nats.commandsUnstored` and `nats.error`, `/metrics` `nats_commands_unstored`.
 *
 * Entries past their time are dropped whenever an entry is added, not only when `/health` or
 * `/metrics` reads the count: the map holds only the commands of the last redelivery delay and ack
 * wait, however long nothing reads it (before, a replica whose health nobody read kept one entry
 * per such command for good).
 */
export class UnstoredAnswers {
  /** By command id: the error, and until when (ms since the epoch, by `now`) it is counted. Insertion order: the last is the latest. */
  private readonly entries = new Map<string, { error: string; until: number }>();

  /** `now`: the clock (ms since the epoch; tests pass their own). */
  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Records that `commandId`'s answer was not stored (`error`, the publish's or look-up's message),
   * counted for `forMs` ms from now (replacing an earlier entry of the same command); first drops
   * every entry past its time.
   */
  add(commandId: string, error: string, forMs: number): void {
    const now = this.now();
    this.prune(now);
    this.entries.delete(commandId);
    this.entries.set(commandId, { error, until: now + forMs });
  }

  /** Forgets `commandId` (this replica finished it: acknowledged or terminated). */
  forget(commandId: string): void {
    this.entries.delete(commandId);
  }

  /** The commands counted now, and the latest error among them (null when none). */
  summary(): { count: number; lastError: string | null } {
    this.prune(this.now());
    let lastError: string | null = null;
    for (const entry of this.entries.values()) lastError = entry.error;
    return { count: this.entries.size, lastError };
  }

  /** Entries held, whether past their time or not (what the map costs in memory). */
  get held(): number {
    return this.entries.size;
  }

  private prune(now: number): void {
    for (const [id, entry] of this.entries) if (entry.until < now) this.entries.delete(id);
  }
}
