/**
 * Waits that the PostgreSQL store's `close()` ends at once: a connection being opened or handed
 * over, which the driver cannot abort, is raced against the close, so that the operation waiting
 * for it fails with the store-closed error at the close, not when the driver's own timeout fires
 * (seconds after `close()` returned, e.g. inside the next test suite of the same process).
 */
export class CloseSignal {
  /** The close's error, null while open. */
  private error: Error | null = null;
  /** The rejections of the races not settled yet, called at the close. */
  private readonly waits = new Set<(error: Error) => void>();

  /** True once {@link close} was called. */
  get closed(): boolean {
    return this.error !== null;
  }

  /**
   * `work`'s outcome, unless {@link close} comes first: then a rejection with the close's error, at
   * the close (at once when closed already). A value `work` yields after that goes to `late` (e.g. a
   * connection given back to its pool); its error then is dropped. Keeps nothing once settled.
   */
  race<T>(work: Promise<T>, late: (value: T) => void = () => undefined): Promise<T> {
    if (this.error) {
      work.then(late, () => undefined);
      return Promise.reject(this.error);
    }
    return new Promise<T>((resolve, reject) => {
      let abandoned = false;
      const abandon = (error: Error): void => {
        abandoned = true;
        reject(error);
      };
      this.waits.add(abandon);
      work.then(
        (value) => {
          this.waits.delete(abandon);
          if (abandoned) late(value);
          else resolve(value);
        },
        (error: unknown) => {
          this.waits.delete(abandon);
          if (!abandoned) reject(error);
        },
      );
    });
  }

  /** Rejects every race not settled yet, and every later one, with `error`. Idempotent (the first error stays). */
  close(error: Error): void {
    if (this.error) return;
    this.error = error;
    for (const abandon of this.waits) abandon(error);
    this.waits.clear();
  }
}
