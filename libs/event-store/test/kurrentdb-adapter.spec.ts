/**
 * The KurrentDB adapter's own logic against a stub client (runs without a server): option names,
 * error mapping, idempotent-retry detection, exclusive positions. The behaviour against a real
 * server is the contract suite in kurrentdb-event-store.spec.ts.
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { StreamDeletedError, StreamNotFoundError, UnavailableError, WrongExpectedVersionError, type KurrentDBClient } from '@kurrent/kurrentdb-client';
import { DuplicateEventIdError, EventStoreUnavailableError, WrongExpectedRevisionError, type RecordedEvent } from '../src';
import { KurrentDbEventStore } from '../src/kurrentdb';

const recorded = (stream: string, revision: bigint, position: bigint, data: unknown = { n: Number(revision) }, id = randomUUID()) => ({
  event: {
    streamId: stream,
    id,
    isJson: true,
    revision,
    type: 'T',
    created: new Date(0),
    data,
    metadata: undefined,
    position: { commit: position, prepare: position },
  },
  commitPosition: position,
});

/** The `$tb` of a soft-deleted stream as the client parses it: the server's 2^63 - 1 as a JSON number (2^63 once a double). */
const DELETED_TB = 2 ** 63;

async function* iterate<T>(items: T[]): AsyncIterableIterator<T> {
  for (const i of items) yield i;
}

function stub(overrides: Record<string, unknown>): { client: KurrentDBClient; calls: Record<string, unknown[][]> } {
  const calls: Record<string, unknown[][]> = {};
  const client = new Proxy(
    {},
    {
      get: (_t, key: string) => {
        if (key === 'then') return undefined;
        return (...args: unknown[]) => {
          (calls[key] ??= []).push(args);
          const impl = overrides[key] as ((...a: unknown[]) => unknown) | undefined;
          return impl ? impl(...args) : undefined;
        };
      },
    },
  ) as KurrentDBClient;
  return { client, calls };
}

describe('KurrentDbEventStore (stub client)', () => {
  it('passes the expected revision as streamState (never expectedRevision) and maps the result to bigint positions', async () => {
    const { client, calls } = stub({
      appendToStream: async () => ({ success: true, nextExpectedRevision: 3n, position: { commit: 900n, prepare: 900n } }),
    });
    const store = new KurrentDbEventStore(client);
    const id = randomUUID().toUpperCase();
    const r = await store.appendToStream('session-a', [{ id, type: 'T', data: { x: 1 }, metadata: { m: 1 } }], { expectedRevision: 2n });
    expect(r).toEqual({ nextExpectedRevision: 3n, position: 900n });
    const [stream, events, options] = calls.appendToStream[0] as [string, { id: string; contentType: string }[], Record<string, unknown>];
    expect(stream).toBe('session-a');
    expect(options).toEqual({ streamState: 2n });
    expect(options).not.toHaveProperty('expectedRevision');
    expect(events[0]).toMatchObject({ id: id.toLowerCase(), contentType: 'application/json' });
  });

  it('maps WrongExpectedVersionError to WrongExpectedRevisionError with expected and actual', async () => {
    const { client } = stub({
      appendToStream: async () => {
        throw new WrongExpectedVersionError(undefined, { streamName: 'session-a', expected: 1n, current: 4n });
      },
      readStream: () => iterate([recorded('session-a', 4n, 40n)]),
    });
    const err = await new KurrentDbEventStore(client)
      .appendToStream('session-a', [{ id: randomUUID(), type: 'T', data: {} }], { expectedRevision: 1n })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WrongExpectedRevisionError);
    expect(err).toMatchObject({ stream: 'session-a', expected: 1n, actual: 4n });
  });

  it("names a soft-deleted stream's state 'no_stream' when an append is refused (the server reports its last deleted revision, or StreamDeleted)", async () => {
    let thrown: unknown = new WrongExpectedVersionError(undefined, { streamName: 's', expected: 1n, current: 4n });
    const { client } = stub({
      appendToStream: async () => {
        throw thrown;
      },
      readStream: () =>
        // eslint-disable-next-line require-yield -- a soft-deleted stream reads as not found
        (async function* () {
          throw new StreamNotFoundError(undefined, 's');
        })(),
    });
    const store = new KurrentDbEventStore(client);
    const append = (expectedRevision: bigint | 'stream_exists') => store.appendToStream('s', [{ id: randomUUID(), type: 'T', data: {} }], { expectedRevision });
    await expect(append(1n)).rejects.toMatchObject({ name: 'WrongExpectedRevisionError', expected: 1n, actual: 'no_stream' });
    thrown = StreamDeletedError.fromStreamName('s');
    await expect(append('stream_exists')).rejects.toMatchObject({ name: 'WrongExpectedRevisionError', expected: 'stream_exists', actual: 'no_stream' });
  });

  it("maps a missing stream's negative or absent revision to 'no_stream', and unavailability to EventStoreUnavailableError", async () => {
    let thrown: unknown = new WrongExpectedVersionError(undefined, { streamName: 's', expected: 'stream_exists', current: 'no_stream' });
    const { client } = stub({
      appendToStream: async () => {
        throw thrown;
      },
    });
    const store = new KurrentDbEventStore(client);
    const append = () => store.appendToStream('s', [{ id: randomUUID(), type: 'T', data: {} }], { expectedRevision: 'stream_exists' });
    await expect(append()).rejects.toMatchObject({ name: 'WrongExpectedRevisionError', expected: 'stream_exists', actual: 'no_stream' });
    thrown = new UnavailableError(undefined);
    await expect(append()).rejects.toBeInstanceOf(EventStoreUnavailableError);
  });

  it('says an append or a deletion the server did not answer may have been written (the service does not run it again), and a read wrote nothing', async () => {
    const { client } = stub({
      appendToStream: async () => {
        throw new UnavailableError(undefined);
      },
      deleteStream: async () => {
        throw new UnavailableError(undefined);
      },
      readStream: () => {
        throw new UnavailableError(undefined);
      },
    });
    const store = new KurrentDbEventStore(client);
    const append = store.appendToStream('s', [{ id: randomUUID(), type: 'T', data: {} }], { expectedRevision: 'any' });
    await expect(append).rejects.toMatchObject({ name: 'EventStoreUnavailableError', mayHaveBeenWritten: true });
    await expect(append).rejects.toThrow(/KurrentDB did not answer the append to s, so it may have been written or not: send the same append again unchanged/);
    await expect(store.deleteStream('s')).rejects.toMatchObject({
      mayHaveBeenWritten: true,
      message: expect.stringMatching(/^KurrentDB did not answer the deletion of s/),
    });
    await expect(store.readStream('s')).rejects.toMatchObject({ name: 'EventStoreUnavailableError', mayHaveBeenWritten: false });
  });

  it('an acknowledged retry without a position returns the original position, or DuplicateEventIdError if content differs', async () => {
    const id = randomUUID();
    const { client, calls } = stub({
      appendToStream: async () => ({ success: true, nextExpectedRevision: 0n, position: undefined }),
      readStream: () => iterate([recorded('s', 0n, 123n, { v: 1 }, id)]),
    });
    const store = new KurrentDbEventStore(client);
    expect(await store.appendToStream('s', [{ id, type: 'T', data: { v: 1 } }], { expectedRevision: 'no_stream' })).toEqual({
      nextExpectedRevision: 0n,
      position: 123n,
    });
    // The stream's incarnation (its first revision: the events are of its current life), then the events.
    expect(calls.readStream[0][1]).toMatchObject({ fromRevision: 'start', maxCount: 1 });
    expect(calls.readStream[1][1]).toMatchObject({ fromRevision: 0n, maxCount: 1 });
    await expect(store.appendToStream('s', [{ id, type: 'T', data: { v: 2 } }], { expectedRevision: 'no_stream' })).rejects.toBeInstanceOf(
      DuplicateEventIdError,
    );
  });

  it("refuses an append the server takes for a replay of a soft-deleted stream's events (kurrent-io/KurrentDB#4058: success, nothing written) with DuplicateEventIdError", async () => {
    const id = randomUUID();
    const { client } = stub({
      // The server's answer: the deleted event's revision, no position.
      appendToStream: async () => ({ success: true, nextExpectedRevision: 1n, position: undefined }),
      readStream: () =>
        // eslint-disable-next-line require-yield -- the stream is soft-deleted: it reads as not found
        (async function* () {
          throw new StreamNotFoundError(undefined, 's');
        })(),
      getStreamMetadata: async () => ({ streamName: 's', metadata: { truncateBefore: DELETED_TB } }),
      readAll: () => iterate([recorded('s', 1n, 77n)]),
    });
    const store = new KurrentDbEventStore(client);
    const err = await store.appendToStream('s', [{ id, type: 'T', data: {} }], { expectedRevision: 'no_stream' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DuplicateEventIdError);
    expect(err).toMatchObject({ stream: 's', eventId: id });
  });

  describe('streamIncarnation', () => {
    const notFound = () =>
      // eslint-disable-next-line require-yield -- a missing or soft-deleted stream reads as not found
      (async function* () {
        throw new StreamNotFoundError(undefined, 's.x');
      })();

    it("is a live stream's first revision (reads start at the soft delete's $tb)", async () => {
      const { client, calls } = stub({ readStream: () => iterate([recorded('s.x', 5n, 50n)]) });
      expect(await new KurrentDbEventStore(client).streamIncarnation('s.x')).toBe(5n);
      expect(calls.readStream[0]).toEqual(['s.x', { direction: 'forwards', fromRevision: 'start', maxCount: 1 }]);
      expect(calls.getStreamMetadata).toBeUndefined();
    });

    it('is 0n for a stream never written (no metadata, no $tb)', async () => {
      const { client, calls } = stub({ readStream: notFound, getStreamMetadata: async () => ({ streamName: 's.x' }) });
      expect(await new KurrentDbEventStore(client).streamIncarnation('s.x')).toBe(0n);
      expect(calls.readAll).toBeUndefined();
    });

    it("is the revision after a soft-deleted stream's last event, found in $all backwards with an exact stream-name filter", async () => {
      const { client, calls } = stub({
        readStream: notFound,
        getStreamMetadata: async () => ({ streamName: 's.x', metadata: { truncateBefore: DELETED_TB } }),
        readAll: () => iterate([recorded('s.x', 3n, 30n)]),
      });
      expect(await new KurrentDbEventStore(client).streamIncarnation('s.x')).toBe(4n);
      expect(calls.readAll[0][0]).toMatchObject({
        direction: 'backwards',
        fromPosition: 'end',
        maxCount: 1,
        filter: { filterOn: 'streamName', regex: '^s\\.x$' },
      });
    });

    it('is $tb for a stream undeleted without events yet, and an EventStoreUnavailableError when a deleted stream left nothing in $all', async () => {
      const { client } = stub({ readStream: notFound, getStreamMetadata: async () => ({ streamName: 's.x', metadata: { truncateBefore: 7 } }) });
      expect(await new KurrentDbEventStore(client).streamIncarnation('s.x')).toBe(7n);
      const empty = stub({
        readStream: notFound,
        getStreamMetadata: async () => ({ streamName: 's.x', metadata: { truncateBefore: DELETED_TB } }),
        readAll: () => iterate([]),
      });
      await expect(new KurrentDbEventStore(empty.client).streamIncarnation('s.x')).rejects.toBeInstanceOf(EventStoreUnavailableError);
    });
  });

  it('reads a missing stream as [] and its revision as null', async () => {
    const { client } = stub({
      readStream: () =>
        // eslint-disable-next-line require-yield -- a read that fails before its first event, as the client does for a missing stream
        (async function* () {
          throw new StreamNotFoundError(undefined, 's');
        })(),
    });
    const store = new KurrentDbEventStore(client);
    expect(await store.readStream('s')).toEqual([]);
    expect(await store.streamRevision('s')).toBeNull();
  });

  it('readAll is exclusive of fromPosition, filtered by prefix, and honours maxCount', async () => {
    const { client, calls } = stub({
      readAll: () => iterate([recorded('p-a', 0n, 100n), recorded('p-a', 1n, 200n), recorded('p-b', 0n, 300n)]),
    });
    const read = await new KurrentDbEventStore(client).readAll({ fromPosition: 100n, streamPrefix: 'p-', maxCount: 1 });
    expect(read.map((e) => e.position)).toEqual([200n]);
    const options = calls.readAll[0][0] as { fromPosition: unknown; filter: { prefixes: string[]; filterOn: string } };
    expect(options.fromPosition).toEqual({ commit: 100n, prepare: 100n });
    expect(options.filter).toMatchObject({ prefixes: ['p-'], filterOn: 'streamName' });
  });

  it('a $all subscription starts at the checkpoint, drops events at or before it, and ends on close', async () => {
    const source = Object.assign(Readable.from([recorded('p-a', 0n, 100n), recorded('p-a', 1n, 200n), recorded('p-a', 2n, 300n)]), {
      unsubscribe: jest.fn(async () => undefined),
    });
    const { client, calls } = stub({ subscribeToAll: () => source });
    const sub = new KurrentDbEventStore(client).subscribeToAll({ fromPosition: 100n, streamPrefix: 'p-' });
    const got: RecordedEvent[] = [];
    for await (const e of sub) got.push(e);
    expect(got.map((e) => e.position)).toEqual([200n, 300n]);
    expect(calls.subscribeToAll[0][0]).toMatchObject({ fromPosition: { commit: 100n, prepare: 100n }, filter: { prefixes: ['p-'] } });
    expect(source.unsubscribe).toHaveBeenCalled();
  });
});
