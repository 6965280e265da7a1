import { ConnectionWaitTimeoutError, PoolCheckouts } from './pool-checkouts';

/** A fake pool: `connect()` answers when the test says (`open(n)`), connections are plain objects. */
function fakePool() {
  const asks: Array<{ resolve: (c: { n: number }) => void; reject: (e: Error) => void }> = [];
  const givenBack: Array<{ n: number }> = [];
  let made = 0;
  return {
    asks,
    givenBack,
    connect: () => new Promise<{ n: number }>((resolve, reject) => asks.push({ resolve, reject })),
    /** Answers ask `i` (0-based) with a new connection. */
    open(i: number): { n: number } {
      const client = { n: ++made };
      asks[i].resolve(client);
      return client;
    },
    giveBack: (client: { n: number }) => givenBack.push(client),
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('PoolCheckouts: the PostgreSQL store queue in front of its pool', () => {
  it('asks the pool for at most `size` connections; the others wait in turn and get the place of a returned one', async () => {
    const pool = fakePool();
    const checkouts = new PoolCheckouts(pool.connect, pool.giveBack, 2, 0);
    const order: number[] = [];
    const works = [0, 1, 2, 3].map((i) => checkouts.checkout().then((c) => (order.push(i), c)));
    await settle();
    expect(pool.asks).toHaveLength(2);
    expect(checkouts.waiting).toBe(2);
    const first = pool.open(0);
    pool.open(1);
    await settle();
    checkouts.returned(first);
    await settle();
    expect(pool.asks).toHaveLength(3);
    expect(checkouts.waiting).toBe(1);
    pool.open(2);
    await Promise.all(works.slice(0, 3));
    expect(order).toEqual([0, 1, 2]);
    // a connection returned twice, or one it never handed out, frees nothing
    checkouts.returned(first);
    checkouts.returned({ n: 99 });
    await settle();
    expect(pool.asks).toHaveLength(3);
  });

  it('a failed ask of the pool gives its place to the next waiter', async () => {
    const pool = fakePool();
    const checkouts = new PoolCheckouts(pool.connect, pool.giveBack, 1, 0);
    const failed = checkouts.checkout();
    const next = checkouts.checkout();
    await settle();
    pool.asks[0].reject(new Error('connection refused'));
    await expect(failed).rejects.toThrow('connection refused');
    await settle();
    pool.open(1);
    await expect(next).resolves.toEqual({ n: 1 });
  });

  it('a wait longer than `waitMs` fails with the pool driver timeout message', async () => {
    const pool = fakePool();
    const checkouts = new PoolCheckouts(pool.connect, pool.giveBack, 1, 30);
    void checkouts.checkout();
    const waiting = checkouts.checkout();
    const error = await waiting.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionWaitTimeoutError);
    expect((error as Error).message).toMatch(/^timeout exceeded when trying to connect \(all 1 pooled connections stayed busy for 30 ms\)$/);
    expect(checkouts.waiting).toBe(0);
  });

  it('close fails the waiting checkouts and the asks in progress at once, and every later one; a connection that comes after goes back', async () => {
    const pool = fakePool();
    const checkouts = new PoolCheckouts(pool.connect, pool.giveBack, 1, 60_000);
    const asking = checkouts.checkout();
    const waiting = [checkouts.checkout(), checkouts.checkout()];
    await settle();
    const closed = new Error('closed');
    checkouts.close(closed);
    await expect(asking).rejects.toBe(closed);
    for (const w of waiting) await expect(w).rejects.toBe(closed);
    await expect(checkouts.checkout()).rejects.toBe(closed);
    expect(checkouts.waiting).toBe(0);
    const late = pool.open(0);
    await settle();
    expect(pool.givenBack).toEqual([late]);
  });
});
