/**
 * `visitStreamUpTo` visits a stream's events in revision order, a page at a time, from its start
 * or, since the compaction diff folds the window before a decision and then on through the
 * decision's events (issue 14), from a given revision.
 */
import type { EventStore, ReadStreamOptions, RecordedEvent } from '@lib/event-store';
import { STREAM_PAGE, visitStreamUpTo } from './stream-in-pages';

/** A store of one stream whose revisions are `first`..`last`, recording each read's options. */
function streamStore(first: number, last: number): { store: EventStore; reads: ReadStreamOptions[] } {
  const reads: ReadStreamOptions[] = [];
  const events = Array.from({ length: last - first + 1 }, (_, i) => ({ revision: BigInt(first + i), type: 'x', data: {} }) as unknown as RecordedEvent);
  const store = {
    async readStream(_stream: string, options: ReadStreamOptions = {}) {
      reads.push(options);
      if (options.maxCount === 0) return [];
      const from = options.fromRevision === 'start' || options.fromRevision === undefined ? -1n : (options.fromRevision as bigint);
      return events.filter((e) => e.revision >= from).slice(0, options.maxCount);
    },
  } as unknown as EventStore;
  return { store, reads };
}

const visitedRevisions = async (store: EventStore, upTo: bigint, from?: bigint | 'start'): Promise<bigint[]> => {
  const seen: bigint[] = [];
  const count = await visitStreamUpTo(store, 's', upTo, (e) => void seen.push(e.revision), from);
  expect(count).toBe(seen.length);
  return seen;
};

describe('visitStreamUpTo', () => {
  it('visits the events from the start up to a revision, inclusive, a page at a time', async () => {
    const { store, reads } = streamStore(0, 2 * STREAM_PAGE + 10);
    const seen = await visitedRevisions(store, BigInt(2 * STREAM_PAGE + 4));
    expect(seen).toEqual(Array.from({ length: 2 * STREAM_PAGE + 5 }, (_, i) => BigInt(i)));
    expect(reads.map((r) => r.maxCount)).toEqual([STREAM_PAGE, STREAM_PAGE, 5]);
  });

  it('visits from a given revision on: the first read starts there', async () => {
    const { store, reads } = streamStore(0, 3000);
    const seen = await visitedRevisions(store, 2002n, 1500n);
    expect(seen[0]).toBe(1500n);
    expect(seen.at(-1)).toBe(2002n);
    expect(seen).toHaveLength(503);
    expect(reads[0]).toEqual({ fromRevision: 1500n, maxCount: 503, toRevision: 2002n });
  });

  it('visits nothing and reads nothing when the revision is before where it starts (a decision at the first revision)', async () => {
    const { store, reads } = streamStore(0, 10);
    expect(await visitedRevisions(store, -1n)).toEqual([]);
    expect(await visitedRevisions(store, 4n, 5n)).toEqual([]);
    expect(reads).toEqual([]);
  });

  it('visits a stream that starts later (written again after an erasure) from its first revision', async () => {
    const { store } = streamStore(700, 900);
    expect(await visitedRevisions(store, 749n)).toEqual(Array.from({ length: 50 }, (_, i) => BigInt(700 + i)));
  });
});
