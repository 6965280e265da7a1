import { BoundedHead } from './bounded-head';

describe('BoundedHead', () => {
  afterEach(() => jest.useRealTimers());

  it('answers the store head when the store answers', async () => {
    await expect(new BoundedHead(() => Promise.resolve(42n)).head()).resolves.toBe(42n);
  });

  it("passes the store's own error on", async () => {
    await expect(new BoundedHead(() => Promise.reject(new Error('ECONNREFUSED'))).head()).rejects.toThrow('ECONNREFUSED');
  });

  it('says the store did not answer once the bound passes, and never starts a second read while one is unanswered', async () => {
    jest.useFakeTimers();
    let resolveRead: (head: bigint) => void = () => undefined;
    const read = jest.fn(() => new Promise<bigint>((r) => (resolveRead = r)));
    const head = new BoundedHead(read, 1000);
    const first = head.head();
    jest.advanceTimersByTime(600);
    // Arriving while that read is pending: waits only for what is left of its bound.
    const second = head.head();
    jest.advanceTimersByTime(400);
    await expect(first).rejects.toThrow('the event store did not answer within 1000 ms');
    await expect(second).rejects.toThrow('did not answer within 1000 ms');
    // Past the bound of the pending read: told at once, no time passing.
    const third = head.head();
    jest.advanceTimersByTime(0);
    await expect(third).rejects.toThrow('did not answer');
    expect(read).toHaveBeenCalledTimes(1);
    // The store answers at last: the next probe reads again.
    resolveRead(7n);
    await Promise.resolve();
    read.mockImplementation(() => Promise.resolve(8n));
    await expect(head.head()).resolves.toBe(8n);
    expect(read).toHaveBeenCalledTimes(2);
  });
});
