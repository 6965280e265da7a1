import type { RecordedEvent } from './event-store.port';
import { PollingSubscription } from './polling-subscription';

const event = (position: number): RecordedEvent => ({
  id: `e${position}`,
  type: 'T',
  data: {},
  metadata: undefined,
  streamId: 's',
  revision: BigInt(position - 1),
  position: BigInt(position),
  created: new Date(0),
});

/** A log of `count` events read in pages of at most `pageSize`, counting the reads. */
function pagedLog(count: number, pageSize: number) {
  const log = Array.from({ length: count }, (_, i) => event(i + 1));
  const state = { reads: 0 };
  const readPage = async (after: bigint) => {
    state.reads++;
    return log.filter((e) => e.position > after).slice(0, pageSize);
  };
  return { log, state, readPage };
}

const settle = () => new Promise((resolve) => setImmediate(() => setImmediate(resolve)));

describe('PollingSubscription', () => {
  it('after a page shorter than its page size, reads again only when woken (no empty read after each page)', async () => {
    const { log, state, readPage } = pagedLog(5, 3);
    const sub = new PollingSubscription(readPage, 0n, 60_000, undefined, 3);
    const it = sub[Symbol.asyncIterator]();
    const seen: bigint[] = [];
    for (let i = 0; i < 5; i++) seen.push(((await it.next()).value as RecordedEvent).position);
    expect(seen).toEqual([1n, 2n, 3n, 4n, 5n]);
    const next = it.next();
    await settle();
    expect(state.reads).toBe(2); // a full page, then a short one: no third read yet
    log.push(event(6));
    sub.wake();
    expect(((await next).value as RecordedEvent).position).toBe(6n);
    expect(state.reads).toBe(3);
    await sub.close();
  });

  it('without a page size, reads until a page is empty before it waits', async () => {
    const { state, readPage } = pagedLog(2, 3);
    const sub = new PollingSubscription(readPage, 0n, 60_000);
    const it = sub[Symbol.asyncIterator]();
    await it.next();
    await it.next();
    const next = it.next();
    await settle();
    expect(state.reads).toBe(2);
    await sub.close();
    expect((await next).done).toBe(true);
  });

  it('a commit that wakes it while a page is being delivered is read right after that page', async () => {
    const { log, state, readPage } = pagedLog(2, 3);
    const sub = new PollingSubscription(readPage, 0n, 60_000, undefined, 3);
    const it = sub[Symbol.asyncIterator]();
    await it.next();
    log.push(event(3));
    sub.wake();
    expect(((await it.next()).value as RecordedEvent).position).toBe(2n);
    expect(((await it.next()).value as RecordedEvent).position).toBe(3n);
    expect(state.reads).toBe(2);
    await sub.close();
  });
});
