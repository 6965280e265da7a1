import type { RecordedEvent } from './event-store.port';
import { MAX_APPEND_COMPLETION_PAGES, completeLastAppend, mayContinueAppend } from './append-boundary';

/** A log of appends: each entry is [stream, number of events]; positions from 1, revisions per stream from 0. */
function logOf(appends: Array<[string, number]>): { events: RecordedEvent[]; ends: Set<bigint> } {
  const events: RecordedEvent[] = [];
  const ends = new Set<bigint>();
  const revisions = new Map<string, bigint>();
  for (const [stream, count] of appends) {
    for (let i = 0; i < count; i++) {
      const revision = revisions.get(stream) ?? 0n;
      revisions.set(stream, revision + 1n);
      const position = BigInt(events.length + 1);
      events.push({ id: `e${position}`, type: 'T', data: {}, metadata: undefined, streamId: stream, revision, position, created: new Date(0) });
    }
    ends.add(BigInt(events.length));
  }
  return { events, ends };
}

const readerOf = (events: RecordedEvent[]) => {
  const reads: Array<[bigint, number]> = [];
  const read = async (after: bigint, maxCount: number) => {
    reads.push([after, maxCount]);
    return events.filter((e) => e.position > after).slice(0, maxCount);
  };
  return { read, reads };
};

describe('mayContinueAppend', () => {
  const { events } = logOf([
    ['a', 2],
    ['b', 1],
    ['a', 1],
  ]);
  it('is true only for the next revision of the same stream at the next position', () => {
    expect(mayContinueAppend(events[0], events[1])).toBe(true);
    expect(mayContinueAppend(events[1], events[2])).toBe(false); // another stream
    expect(mayContinueAppend(events[1], events[3])).toBe(false); // same stream, not the next position
    expect(mayContinueAppend(events[3], undefined)).toBe(false); // the read ended there
  });
});

describe('completeLastAppend', () => {
  it('returns a page that is not full as it is, without reading', async () => {
    const { events } = logOf([['a', 3]]);
    const { read, reads } = readerOf(events);
    await expect(completeLastAppend(events.slice(0, 2), 3, read)).resolves.toEqual(events.slice(0, 2));
    expect(reads).toEqual([]);
  });

  it('completes a full page whose last event is inside an append, and stops where another stream begins', async () => {
    const { events, ends } = logOf([
      ['a', 1],
      ['b', 4],
      ['c', 2],
    ]);
    const { read } = readerOf(events);
    const page = await completeLastAppend(events.slice(0, 3), 3, read);
    expect(page.map((e) => e.position)).toEqual([1n, 2n, 3n, 4n, 5n]);
    expect(ends.has(page[page.length - 1].position)).toBe(true);
  });

  it(`reads on at most ${MAX_APPEND_COMPLETION_PAGES} pages when one stream goes on past the page`, async () => {
    const { events } = logOf([['a', 100]]);
    const { read, reads } = readerOf(events);
    const page = await completeLastAppend(events.slice(0, 3), 3, read);
    expect(page).toHaveLength(3 + 3 * MAX_APPEND_COMPLETION_PAGES);
    expect(reads).toEqual(Array.from({ length: MAX_APPEND_COMPLETION_PAGES }, (_, i) => [BigInt(3 + 3 * i), 3]));
  });

  it('every page of a log read page by page ends at the end of an append (pages of 1 to 5 events, appends of up to 5)', async () => {
    const { events, ends } = logOf([
      ['a', 3],
      ['b', 1],
      ['a', 2],
      ['c', 4],
      ['b', 3],
      ['d', 1],
      ['a', 1],
    ]);
    const { read } = readerOf(events);
    for (let pageSize = 1; pageSize <= 5; pageSize++) {
      const seen: bigint[] = [];
      let after = 0n;
      for (;;) {
        const page = await completeLastAppend(await read(after, pageSize), pageSize, read);
        if (page.length === 0) break;
        expect({ pageSize, end: page[page.length - 1].position, isEnd: ends.has(page[page.length - 1].position) }).toMatchObject({ isEnd: true });
        seen.push(...page.map((e) => e.position));
        after = page[page.length - 1].position;
      }
      expect(seen).toEqual(events.map((e) => e.position));
    }
  });
});
