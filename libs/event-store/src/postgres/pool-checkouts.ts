import { CloseSignal } from './close-signal';

/**
 * No pooled connection became free within the wait for one (`PostgresEventStoreOptions.connectionTimeoutMs`):
 * all `size` were busy. Its message begins as the `pg` pool's own for this case (`timeout exceeded when
 * trying to connect`), which the store and the service read as the server giving no connection in time.
 */
export class ConnectionWaitTimeoutError extends Error {
  override readonly name = 'ConnectionWaitTimeoutError';
  constructor(
    /** The wait (ms). */
    readonly withinMs: number,
    /** The pool's size. */
    readonly size: number,
  ) {
    super(`timeout exceeded when trying to connect (all ${size} pooled connections stayed busy for ${withinMs} ms)`);
  }
}

/** One operation waiting for a permit. */
interface Waiter {
  grant(): void;
  fail(error: Error): void;
  timer?: NodeJS.Timeout;
}

/**
 * The PostgreSQL store's own queue in front of its `pg` pool: at most `size` connections are asked
 * of the pool at a time (its size), so the pool never queues a request itself. A request the `pg`
 * pool queued was failed only at its connect timeout, also after the pool had ended (`Pool.end()`
 * leaves its queue alone); one queued here fails at {@link close}, at once. FIFO; a wait is bounded
 * by `waitMs` (ms; 0: unbounded, as the pool's `connectionTimeoutMillis`), then
 * {@link ConnectionWaitTimeoutError}.
 */
export class PoolCheckouts<C extends object> {
  /** Permits out: connections asked of the pool (being opened, or checked out). */
  private out = 0;
  private readonly queue: Waiter[] = [];
  /** Connections checked out under a permit, until {@link returned}. */
  private readonly holding = new WeakSet<C>();
  /** The close's error, null while open. */
  private closedWith: Error | null = null;
  /** Asks of the pool in progress (a connection being opened or handed over), ended at the close. */
  private readonly connecting = new CloseSignal();

  constructor(
    /** Asks the pool for a connection (`pool.connect()`). */
    private readonly connect: () => Promise<C>,
    /** Gives a connection back to the pool unused (one that came after the close). */
    private readonly giveBack: (client: C) => void,
    /** The pool's size: permits. */
    readonly size: number,
    /** The longest wait for a permit (ms); 0: unbounded. */
    private readonly waitMs: number,
  ) {}

  /** Operations waiting for a connection now (none asked of the pool yet). */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * A connection of the pool, once fewer than `size` are out (in turn).
   * @throws ConnectionWaitTimeoutError when none became free within `waitMs`.
   * @throws the close's error when {@link close} is or was called before one was had.
   * @throws the pool's error (e.g. the server refused the connection).
   */
  async checkout(): Promise<C> {
    await this.permit();
    let client: C;
    try {
      client = await this.connecting.race(this.connect(), this.giveBack);
    } catch (error) {
      this.next();
      throw error;
    }
    this.holding.add(client);
    return client;
  }

  /** `client` went back to the pool (its `release` event): its permit goes to the next waiter. Others are ignored. */
  returned(client: C): void {
    if (this.holding.delete(client)) this.next();
  }

  /**
   * Fails every waiting checkout, every ask of the pool in progress and every later checkout with
   * `error`, at once. Connections checked out stay theirs until {@link returned}. Idempotent.
   */
  close(error: Error): void {
    if (this.closedWith) return;
    this.closedWith = error;
    for (const waiter of this.queue.splice(0)) waiter.fail(error);
    this.connecting.close(error);
  }

  private permit(): Promise<void> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    if (this.out < this.size) {
      this.out++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          clearTimeout(waiter.timer);
          resolve();
        },
        fail: (error) => {
          clearTimeout(waiter.timer);
          reject(error);
        },
      };
      if (this.waitMs > 0) {
        waiter.timer = setTimeout(() => {
          const at = this.queue.indexOf(waiter);
          if (at >= 0) this.queue.splice(at, 1);
          reject(new ConnectionWaitTimeoutError(this.waitMs, this.size));
        }, this.waitMs);
        // as the pool's own wait: it does not keep the process alive
        waiter.timer.unref();
      }
      this.queue.push(waiter);
    });
  }

  /** A permit given back: to the first waiter (still out), else free. */
  private next(): void {
    const waiter = this.queue.shift();
    if (waiter) waiter.grant();
    else this.out--;
  }
}
