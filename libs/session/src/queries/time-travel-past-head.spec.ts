/**
 * Time travel to a revision past the session's head (newcomer ncbounds, finding 2): `atRevision`
 * of `last + 1`, 2^31, 2^62 or 2^63 − 1 on a 15,000-event uncompacted PostgreSQL session got 400
 * `revision_out_of_range` after 230–320 ms: the fold ran first (a fold past the head folds the
 * current window, read back to the last compaction decision: the whole log without one), the
 * refusal after. It is now refused after one read of the session's head revision and one of its
 * first event (for the message), nothing folded; the answer and message are the same.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MAX_REVISION, SqliteEventStore, type EventStore } from '@lib/event-store';
import { sessionKey, sessionStream } from '../events/session-stream-events';
import { ReadModelStore } from '../read-side/read-model-store';
import { writeRandomSessionLog } from '../../../../test/support/random-session-log';
import { InvalidRequestError } from '../errors';
import { SessionReads } from './session-reads';

/** Turns of the uncompacted session (4 events each: a user message, a call, its answer, a reply). */
const TURNS = 250;

/** `store` counting the events its `readStream` returns (`read()`) and its reads of a head revision (`heads()`). */
function countingReads(store: EventStore): { store: EventStore; read: () => number; heads: () => number; reset: () => void } {
  let read = 0;
  let heads = 0;
  const counting: EventStore = Object.create(store);
  counting.readStream = async (stream, options) => {
    const events = await store.readStream(stream, options);
    read += events.length;
    return events;
  };
  counting.streamRevision = async (stream) => {
    heads++;
    return store.streamRevision(stream);
  };
  return { store: counting, read: () => read, heads: () => heads, reset: () => (read = heads = 0) };
}

describe('time travel past the head of a session', () => {
  let dir: string;
  let store: EventStore;
  let readModels: ReadModelStore;
  let last: bigint;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'time-travel-past-head-'));
    store = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
    readModels = ReadModelStore.open(':memory:');
    const turn = { kind: 'turn' as const, answered: 1, open: false, withLate: false, system: false };
    await writeRandomSessionLog(store, 'long', Array<typeof turn>(TURNS).fill(turn));
    last = (await store.streamRevision(sessionStream(sessionKey('t', 'long'))))!;
  });
  afterAll(async () => {
    readModels.close();
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses atRevision past the head with the same 400 after reading the head and the first event, folding none (it read the whole log first)', async () => {
    const counting = countingReads(store);
    // Only the log-folding paths of window() are used (atRevision): no projector, no waits.
    const reads = new SessionReads(counting.store, readModels, {} as never, { maxWaitMs: 0 } as never, {} as never);
    expect(last).toBe(BigInt(TURNS * 4 - 1));
    for (const atRevision of [last + 1n, 2n ** 31n, 2n ** 62n, MAX_REVISION]) {
      counting.reset();
      const error = await reads.window('t', 'long', { atRevision, format: 'events', estimator: 'chars' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidRequestError);
      expect(error).toMatchObject({
        code: 'revision_out_of_range',
        parameter: 'atRevision',
        message: `atRevision: the session's revisions run from 0 to ${last}; ask for a revision in that range`,
      });
      expect({ atRevision, read: counting.read(), heads: counting.heads() }).toEqual({ atRevision, read: 1, heads: 1 });
    }
  });

  it('still answers the head revision itself, and 404 for a session with no event', async () => {
    const counting = countingReads(store);
    const reads = new SessionReads(counting.store, readModels, {} as never, { maxWaitMs: 0 } as never, {} as never);
    const window = (await reads.window('t', 'long', { atRevision: last, format: 'events', estimator: 'chars' })) as { revision: string; events: unknown[] };
    expect(window.revision).toBe(String(last));
    expect(window.events).toHaveLength(TURNS * 4);
    const missing = await reads.window('t', 'none', { atRevision: 5n, format: 'events', estimator: 'chars' }).catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: 'session_not_found' });
  });
});
