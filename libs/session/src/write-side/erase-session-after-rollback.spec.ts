/**
 * Erasures of a log a build before e92296e wrote after a rollback (newcomer ncupgrade, F1). Such a
 * build writes an erased session again from revision 0, so a later life can end at the same
 * revision as one this build erased and recorded before. The record's id derived from the
 * revision alone then already existed: the store refused it, the erasure took the refusal for
 * another erasure's record landing meanwhile, answered 409 64 times in a row, and left the
 * session's stream deleted without a record, so the read models kept serving the erased text
 * (window, summary, recall). A resend then answered with the earlier life's record.
 */
import fc from 'fast-check';
import type Database from 'better-sqlite3';
import { EventStoreUnavailableError, SqliteEventStore, type AppendOptions, type EventData, type EventStore } from '@lib/event-store';
import { CONVERSATION_EVENT, sessionKey, sessionStream } from '../events/session-stream-events';
import { SESSION_ERASED, erasureStream, type SessionErasedData } from '../events/erasure-events';
import { ReadModelStore } from '../read-side/read-model-store';
import { SessionProjector } from '../read-side/session-projector';
import { getWindow } from '../read-side/queries/window-query';
import { getSessionSummary } from '../read-side/queries/session-summary-query';
import { searchRecall } from '../read-side/queries/recall-query';
import { user } from '../read-side/testing/recorded-session-log';
import { EraseSessionCommand, EraseSessionHandler, erasureRecordId } from './erase-session';
import { SessionStateCache } from './session-state-cache';
import { OlderSqliteBuild } from './testing/older-sqlite-build';

const STREAM = sessionStream(sessionKey('t', 's'));
/** The record wait of the handlers (ms): nothing else erases here. */
const RECORD_WAIT_MS = 10;

/** A conversation event of session `s` saying `text` (as either build writes it). */
const said = (id: string, text: string) => ({
  type: CONVERSATION_EVENT,
  data: { event: user(id, text), costs: { chars: text.length, cl100k_base: 3, o200k_base: 3 } },
});

/** A store, a replica's projector on it, what an older build writes to it, and this build's erasure handlers. */
function setUp() {
  const store = SqliteEventStore.open(':memory:');
  const projector = new SessionProjector(ReadModelStore.open(':memory:'));
  projector.start(store);
  const older = new OlderSqliteBuild((store as unknown as { db: Database.Database }).db);
  const eraser = (on: EventStore = store) => new EraseSessionHandler(on, new SessionStateCache(on), projector, RECORD_WAIT_MS);
  const erase = (on?: EventStore) => eraser(on).execute(new EraseSessionCommand('t', 's'));
  const caughtUp = async () => expect(await projector.waitForPosition(await store.headPosition(), 5000)).toBe(true);
  const records = async () => (await store.readStream(erasureStream('t'))).filter((e) => e.type === SESSION_ERASED);
  /** This build's append of a life of `s` (its revisions continue after every erased one). */
  const append = (texts: string[], tag: string) =>
    store.appendToStream(
      STREAM,
      texts.map((text, i): EventData => ({ id: crypto.randomUUID(), ...said(`${tag}-${i}`, text) })),
    );
  /** Whether the read models show anything of session `s` or the word `word`. */
  const shows = (word: string) =>
    getWindow(projector.store, 't', 's') !== null ||
    getSessionSummary(projector.store, 't', 's', 'chars') !== null ||
    searchRecall(projector.store, { tenantId: 't', q: word }).items.length > 0;
  const close = async () => {
    await projector.stop();
    projector.store.close();
    await store.close();
  };
  return { store, projector, older, erase, caughtUp, records, append, shows, close };
}

/** `store` whose appends to the erasure stream fail: an erasure through it deletes the stream and stops before its record. */
const failingRecords = (store: EventStore): EventStore =>
  Object.assign(Object.create(store) as EventStore, {
    appendToStream: (stream: string, events: EventData[], options?: AppendOptions) =>
      stream === erasureStream('t') ? Promise.reject(new EventStoreUnavailableError('the process ended')) : store.appendToStream(stream, events, options),
  });

describe('an erasure after a rollback to a build that wrote the session again from revision 0', () => {
  let env: ReturnType<typeof setUp>;
  beforeEach(() => {
    env = setUp();
  });
  afterEach(async () => {
    await env.close();
  });

  /** This build erases life one (revisions 0–1); the older build writes life three at revisions 0–1 (after writing and erasing life two). */
  async function lifeEndingWhereAnErasedOneEnded() {
    await env.append(['life one AAAA11', 'ok'], 'one');
    const first = await env.erase();
    expect(first.erasedEvents).toBe(2);
    env.older.appendToSession('t', 's', [said('c', 'life two')]);
    env.older.eraseSession('t', 's');
    expect(env.older.appendToSession('t', 's', [said('d', 'life three SECRET33'), said('e', 'ok')])).toBe(1n);
    await env.caughtUp();
    expect(env.shows('SECRET33')).toBe(true);
    return first;
  }

  it('writes one record of the life under an id of its own, answers it, and the read models forget the text', async () => {
    const first = await lifeEndingWhereAnErasedOneEnded();
    const before = await env.records();
    const answer = await env.erase();
    expect(answer.erasedEvents).toBe(2);
    const after = await env.records();
    expect(after).toHaveLength(before.length + 1);
    const record = after[after.length - 1];
    expect(answer.position).toBe(record.position.toString());
    expect((record.data as SessionErasedData).lastRevision).toBe('1');
    expect(record.id).not.toBe(erasureRecordId('t', 's', 1n));
    expect(record.id).toBe(erasureRecordId('t', 's', 1n, 1));
    expect(answer.position).not.toBe(first.position);
    await env.caughtUp();
    expect(env.shows('SECRET33')).toBe(false);
    // sent again (its answer lost): the same answer, nothing written
    expect(await env.erase()).toEqual(answer);
    expect(await env.records()).toHaveLength(after.length);
  });

  it('finishes an erasure of that life that deleted the stream and stopped before its record, instead of answering the earlier life', async () => {
    const first = await lifeEndingWhereAnErasedOneEnded();
    await expect(env.erase(failingRecords(env.store))).rejects.toBeInstanceOf(EventStoreUnavailableError);
    expect(await env.store.readStream(STREAM)).toEqual([]);
    const before = await env.records();
    const answer = await env.erase();
    expect(answer.position).not.toBe(first.position);
    expect(answer.erasedEvents).toBe(2);
    const after = await env.records();
    expect(after).toHaveLength(before.length + 1);
    expect(after[after.length - 1].id).toBe(erasureRecordId('t', 's', 1n, 1));
    await env.caughtUp();
    expect(env.shows('SECRET33')).toBe(false);
    expect(await env.erase()).toEqual(answer);
    expect(await env.records()).toHaveLength(after.length);
  });

  it("counts only the last life's events when finishing its interrupted erasure after an earlier life ended at a higher revision", async () => {
    // This build erases life one (revisions 0–4); the older build writes life two at revisions 0–1.
    await env.append(['one', 'two', 'three', 'four', 'five'], 'one');
    expect((await env.erase()).erasedEvents).toBe(5);
    expect(env.older.appendToSession('t', 's', [said('a', 'life two SECRET22'), said('b', 'ok')])).toBe(1n);
    await env.caughtUp();
    await expect(env.erase(failingRecords(env.store))).rejects.toBeInstanceOf(EventStoreUnavailableError);
    const answer = await env.erase();
    expect(answer.erasedEvents).toBe(2);
    const records = await env.records();
    expect((records[records.length - 1].data as SessionErasedData).erasedEvents).toBe(2);
    await env.caughtUp();
    expect(env.shows('SECRET22')).toBe(false);
    expect(await env.erase()).toEqual(answer);
  });

  it('takes the next free id past every earlier life ending at that revision', async () => {
    await env.append(['first one', 'ok'], 'one');
    await env.erase();
    for (let life = 1; life <= 3; life++) {
      env.older.appendToSession('t', 's', [said(`x${life}`, 'gone')]);
      env.older.eraseSession('t', 's');
      env.older.appendToSession('t', 's', [said(`a${life}`, `secret${life}word`), said(`b${life}`, 'ok')]);
      await env.caughtUp();
      const answer = await env.erase();
      const records = await env.records();
      expect(records[records.length - 1].id).toBe(erasureRecordId('t', 's', 1n, life));
      expect(answer.position).toBe(records[records.length - 1].position.toString());
      await env.caughtUp();
      expect(env.shows(`secret${life}word`)).toBe(false);
    }
  });
});

/** One life of session `s` in a random history: who writes it (how many events), who erases it, and whether another session's erasure lands before. */
interface Life {
  writer: 'current' | 'older';
  events: number;
  eraser: 'current' | 'current-interrupted' | 'older';
  otherErasedBefore: boolean;
}

const lifeArb: fc.Arbitrary<Life> = fc.record({
  writer: fc.constantFrom('current' as const, 'older' as const),
  events: fc.integer({ min: 1, max: 3 }),
  eraser: fc.constantFrom('current' as const, 'current-interrupted' as const, 'older' as const),
  otherErasedBefore: fc.boolean(),
});

describe('erasures over random histories of lives, with and without revisions written again from 0', () => {
  it('every erasure by this build writes exactly one record of its life, its resend answers the same writing nothing, and the read models forget the life', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(lifeArb, { minLength: 1, maxLength: 6 }), async (lives) => {
        const env = setUp();
        try {
          for (const [n, life] of lives.entries()) {
            const word = `lifeword${n}x`;
            const texts = Array.from({ length: life.events }, (_, i) => `${word} ${i}`);
            if (life.otherErasedBefore) {
              await env.store.appendToStream(sessionStream(sessionKey('t', `other${n}`)), [{ id: crypto.randomUUID(), ...said('o', 'other') }]);
              await new EraseSessionHandler(env.store, new SessionStateCache(env.store), env.projector, RECORD_WAIT_MS).execute(
                new EraseSessionCommand('t', `other${n}`),
              );
            }
            let lastRevision: bigint;
            if (life.writer === 'current') lastRevision = (await env.append(texts, `l${n}`)).nextExpectedRevision;
            else
              lastRevision = env.older.appendToSession(
                't',
                's',
                texts.map((text, i) => said(`l${n}-${i}`, text)),
              );
            await env.caughtUp();
            expect(env.shows(word)).toBe(true);
            if (life.eraser === 'older') {
              env.older.eraseSession('t', 's');
              await env.caughtUp();
              continue;
            }
            if (life.eraser === 'current-interrupted') await expect(env.erase(failingRecords(env.store))).rejects.toBeInstanceOf(EventStoreUnavailableError);
            const before = await env.records();
            const answer = await env.erase();
            const after = await env.records();
            // exactly one record, of this life, answered
            expect(after).toHaveLength(before.length + 1);
            const record = after[after.length - 1];
            expect(answer.position).toBe(record.position.toString());
            expect((record.data as SessionErasedData).sessionId).toBe('s');
            if (life.eraser === 'current') expect((record.data as SessionErasedData).lastRevision).toBe(lastRevision.toString());
            // only this life's events, also when an earlier life ended at a higher revision
            expect(answer.erasedEvents).toBe(life.events);
            expect((record.data as SessionErasedData).erasedEvents).toBe(life.events);
            expect(new Set(after.map((e) => e.id)).size).toBe(after.length);
            await env.caughtUp();
            expect(env.shows(word)).toBe(false);
            // sent again: the same answer, nothing written
            expect(await env.erase()).toEqual(answer);
            expect(await env.records()).toHaveLength(after.length);
          }
        } finally {
          await env.close();
        }
      }),
      { numRuns: 60 },
    );
  }, 120_000);
});
