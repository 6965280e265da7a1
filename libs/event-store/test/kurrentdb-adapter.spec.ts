/**
 * The KurrentDB adapter's own logic against a stub client (runs without a server): option names,
 * error mapping, idempotent-retry detection, exclusive positions. The behaviour against a real
 * server is the contract suite in kurrentdb-event-store.spec.ts.
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { StreamNotFoundError, UnavailableError, WrongExpectedVersionError, type KurrentDBClient } from '@kurrent/kurrentdb-client';
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
    });
    const err = await new KurrentDbEventStore(client)
      .appendToStream('session-a', [{ id: randomUUID(), type: 'T', data: {} }], { expectedRevision: 1n })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WrongExpectedRevisionError);
    expect(err).toMatchObject({ stream: 'session-a', expected: 1n, actual: 4n });
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
    expect(calls.readStream[0][1]).toMatchObject({ fromRevision: 0n, maxCount: 1 });
    await expect(store.appendToStream('s', [{ id, type: 'T', data: { v: 2 } }], { expectedRevision: 'no_stream' })).rejects.toBeInstanceOf(
      DuplicateEventIdError,
    );
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
