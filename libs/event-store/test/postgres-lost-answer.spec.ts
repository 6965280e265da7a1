/**
 * A write whose connection is lost after PostgreSQL ran it, before its answer arrived (newcomer's
 * report: through a proxy cutting ~3% of the server's answers, appends were answered 503
 * `store_unavailable` although they were in the log, and clients that resent them without ids got
 * duplicates). The adapter finds the outcome out before it answers: it runs the same write again on
 * another connection, where the id check answers the original result (or writes it now when the
 * first one never ran). Only when the server cannot be reached again within its connect timeout is
 * the answer EventStoreUnavailableError, saying the outcome is unknown. An {@link AnswerCuttingProxy}
 * between the store and the server loses exactly one answer (or one request).
 */
import { randomUUID } from 'node:crypto';
import type { EventData } from '../src';
import { EventStoreUnavailableError, WriteOutcomeUnknownError, WrongExpectedRevisionError } from '../src';
import { PostgresEventStore } from '../src/postgres';
import { createTestDatabase, describeUnlessSkipped, postgresUnavailableReason } from './postgres-test-database';
import { useStoresAroundAnswerCutter } from './stores-around-answer-cutter';

const skipReason = postgresUnavailableReason();
const ev = (data: unknown = {}, id = randomUUID()): EventData => ({ id, type: 'T', data });

describeUnlessSkipped(skipReason, 'PostgreSQL: a write whose answer is lost', () => {
  /** The database, the proxy, the store through it and the one straight to the server (`direct`: what the log holds). */
  const pg = useStoresAroundAnswerCutter('es_lost', { pollIntervalMs: 25 });
  let n = 0;
  const stream = () => `session-lost-${++n}`;

  it('an append committed whose answer is lost answers its revision and position, and is in the log once', async () => {
    const s = stream();
    await pg.store.appendToStream(s, [ev({ n: 0 })]);
    const events = [ev({ n: 1 }), ev({ n: 2 })];
    const cut = pg.proxy.cutAnswerTo('es_append_v2');
    const result = await pg.store.appendToStream(s, events, { expectedRevision: 0n });
    await cut;
    const log = await pg.direct.readStream(s);
    expect(log.map((e) => e.id)).toEqual([expect.any(String), events[0].id, events[1].id]);
    expect(result).toEqual({ nextExpectedRevision: 2n, position: log[2].position });
  });

  it.each(['any', 'no_stream', 'stream_exists'] as const)('the same with expected revision %s', async (expected) => {
    const s = stream();
    if (expected === 'stream_exists') await pg.store.appendToStream(s, [ev()]);
    const events = [ev({ expected })];
    const cut = pg.proxy.cutAnswerTo('es_append_v2');
    const result = await pg.store.appendToStream(s, events, { expectedRevision: expected });
    await cut;
    const log = await pg.direct.readStream(s);
    expect(log.filter((e) => e.id === events[0].id)).toHaveLength(1);
    expect(result).toEqual({ nextExpectedRevision: log.at(-1)!.revision, position: log.at(-1)!.position });
  });

  it('an append whose request never reached the server is written by the store, once', async () => {
    const s = stream();
    const events = [ev({ lost: 'request' })];
    const cut = pg.proxy.loseRequest('es_append_v2');
    const result = await pg.store.appendToStream(s, events, { expectedRevision: 'no_stream' });
    await cut;
    const log = await pg.direct.readStream(s);
    expect(log.map((e) => e.id)).toEqual([events[0].id]);
    expect(result).toEqual({ nextExpectedRevision: 0n, position: log[0].position });
  });

  it('an append lost before the server ran it, with another writer in between, answers the conflict', async () => {
    const s = stream();
    await pg.store.appendToStream(s, [ev()]);
    const slow = PostgresEventStore.connect(pg.proxy.urlFor(pg.db.url), { connectionTimeoutMs: 30_000 });
    try {
      await slow.streamRevision(s);
      const cut = pg.proxy.loseRequest('es_append_v2', 'refuse');
      const answer = slow.appendToStream(s, [ev({ mine: true })], { expectedRevision: 0n }).catch((e: unknown) => e);
      await cut;
      await pg.direct.appendToStream(s, [ev({ other: true })], { expectedRevision: 0n });
      pg.proxy.acceptAgain();
      expect(await answer).toBeInstanceOf(WrongExpectedRevisionError);
      expect((await pg.direct.readStream(s)).map((e) => e.data)).toEqual([{}, { other: true }]);
    } finally {
      pg.proxy.acceptAgain();
      await slow.close();
    }
  });

  it('the server unreachable after the lost answer: EventStoreUnavailableError saying the outcome is unknown; the same append resent answers the original', async () => {
    const s = stream();
    const cutOff = PostgresEventStore.connect(pg.proxy.urlFor(pg.db.url), { connectionTimeoutMs: 500 });
    try {
      await cutOff.streamRevision(s);
      const events = [ev({ n: 1 })];
      const cut = pg.proxy.cutAnswerTo('es_append_v2', 'refuse');
      const failed = await cutOff.appendToStream(s, events, { expectedRevision: 'no_stream' }).catch((e: unknown) => e);
      await cut;
      expect(failed).toBeInstanceOf(WriteOutcomeUnknownError);
      expect(failed).toBeInstanceOf(EventStoreUnavailableError); // 503 store_unavailable
      expect((failed as Error).message).toMatch(/may have been written.*send the same append again/);
      pg.proxy.acceptAgain();
      const log = await pg.direct.readStream(s);
      expect(log.map((e) => e.id)).toEqual([events[0].id]);
      expect(await cutOff.appendToStream(s, events, { expectedRevision: 'no_stream' })).toEqual({ nextExpectedRevision: 0n, position: log[0].position });
      expect(await pg.direct.readStream(s)).toHaveLength(1);
    } finally {
      pg.proxy.acceptAgain();
      await cutOff.close();
    }
  });

  it('a stream deletion committed whose answer is lost resolves, and the stream is deleted', async () => {
    const s = stream();
    await pg.store.appendToStream(s, [ev(), ev()]);
    const cut = pg.proxy.cutAnswerTo('COMMIT');
    await pg.store.deleteStream(s, { expectedRevision: 1n });
    await cut;
    expect(await pg.direct.readStream(s)).toEqual([]);
    expect(await pg.direct.streamIncarnation(s)).toBe(2n);
  });

  it('a stream deletion committed whose answer is lost, the stream written again at once: resolves, the new life stays', async () => {
    const s = stream();
    await pg.store.appendToStream(s, [ev(), ev()]);
    const slow = PostgresEventStore.connect(pg.proxy.urlFor(pg.db.url), { connectionTimeoutMs: 30_000 });
    try {
      await slow.streamRevision(s);
      const cut = pg.proxy.cutAnswerTo('COMMIT', 'refuse');
      const answer = slow.deleteStream(s, { expectedRevision: 1n }).catch((e: unknown) => e);
      await cut;
      const again = await pg.direct.appendToStream(s, [ev({ again: true })], { expectedRevision: 'no_stream' });
      pg.proxy.acceptAgain();
      expect(await answer).toBeUndefined();
      expect(await pg.direct.readStream(s)).toMatchObject([{ revision: again.nextExpectedRevision, data: { again: true } }]);
    } finally {
      pg.proxy.acceptAgain();
      await slow.close();
    }
  });

  it('a stream deletion whose request never reached the server deletes the stream', async () => {
    const s = stream();
    await pg.store.appendToStream(s, [ev()]);
    const cut = pg.proxy.loseRequest('UPDATE es_streams SET deleted');
    await pg.store.deleteStream(s, { expectedRevision: 0n });
    await cut;
    expect(await pg.direct.readStream(s)).toEqual([]);
  });

  it('a connection lost while the schema is set up fails that call only (the process goes on), and the next call sets it up', async () => {
    const fresh = await createTestDatabase('es_lost_schema');
    const first = PostgresEventStore.connect(pg.proxy.urlFor(fresh.url));
    try {
      const cut = pg.proxy.cutAnswerTo('pg_advisory_xact_lock');
      await expect(first.appendToStream('session-schema', [ev()])).rejects.toBeInstanceOf(EventStoreUnavailableError);
      await cut;
      expect(await first.appendToStream('session-schema', [ev()])).toMatchObject({ nextExpectedRevision: 0n });
    } finally {
      await first.close();
      await fresh.drop();
    }
  });
});
