/**
 * A PostgreSQL server that answers nothing (pgfrozen): `statement_timeout` is the server's, so a frozen server (SIGSTOP,
 * a hung host, a partition dropping packets) never applies it, and before the client-side bound a statement on it
 * waited for ever. An {@link AnswerCuttingProxy} holds back every answer of one connection after a chosen
 * statement, its sockets left open, as a frozen server looks to its client. With `statementTimeoutMs` 200 the bound
 * is 5.2 s: the store then closes that connection (never pooled again), a read fails EventStoreUnavailableError
 * naming the bound, and a write's answer counts as lost: run again, answered as the original (written once), or,
 * the server unreachable meanwhile, WriteOutcomeUnknownError.
 */
import { randomUUID } from 'node:crypto';
import type { EventData } from '../src';
import { EventStoreUnavailableError, PostgresNoAnswerError, WriteOutcomeUnknownError } from '../src';
import { describeUnlessSkipped, postgresUnavailableReason } from './postgres-test-database';
import { useStoresAroundAnswerCutter } from './stores-around-answer-cutter';

jest.setTimeout(60_000);

const skipReason = postgresUnavailableReason();
const ev = (data: unknown = {}, id = randomUUID()): EventData => ({ id, type: 'T', data });
/** The store's bound on an answer with a statement timeout of 200 ms. */
const BOUND_MS = 5200;

describeUnlessSkipped(skipReason, 'PostgreSQL: a statement the server does not answer', () => {
  /** The database, the proxy, the store through it and the one straight to the server (`direct`: what the log holds). */
  const pg = useStoresAroundAnswerCutter('es_noanswer', { pollIntervalMs: 25, statementTimeoutMs: 200, connectionTimeoutMs: 2000 });
  let n = 0;
  const stream = () => `session-unanswered-${++n}`;

  it('a read unanswered is EventStoreUnavailableError naming the bound, its connection closed; the next read is served', async () => {
    const s = stream();
    await pg.direct.appendToStream(s, [ev({ n: 0 })]);
    const held = pg.proxy.holdAnswerTo('FROM es_events WHERE stream');
    const error: unknown = await pg.store.readStream(s).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EventStoreUnavailableError);
    expect((error as EventStoreUnavailableError).cause).toBeInstanceOf(PostgresNoAnswerError);
    expect((error as Error).message).toMatch(new RegExp(`no answer from PostgreSQL to a statement within ${BOUND_MS} ms`));
    await held; // the store closed the connection whose statement is pending
    expect((await pg.store.readStream(s)).map((e) => e.data)).toEqual([{ n: 0 }]);
  });

  it('an append the server committed but did not answer is run again and answered as the original: in the log once', async () => {
    const s = stream();
    await pg.store.appendToStream(s, [ev({ n: 0 })]);
    const events = [ev({ n: 1 }), ev({ n: 2 })];
    const held = pg.proxy.holdAnswerTo('es_append_v2');
    const result = await pg.store.appendToStream(s, events, { expectedRevision: 0n });
    await held;
    const log = await pg.direct.readStream(s);
    expect(log.map((e) => e.id)).toEqual([expect.any(String), events[0].id, events[1].id]);
    expect(result).toEqual({ nextExpectedRevision: 2n, position: log[2].position });
  });

  it('a deletion whose COMMIT is not answered resolves, and the stream is deleted', async () => {
    const s = stream();
    await pg.store.appendToStream(s, [ev(), ev()]);
    const held = pg.proxy.holdAnswerTo('COMMIT');
    await pg.store.deleteStream(s, { expectedRevision: 1n });
    await held;
    expect(await pg.direct.readStream(s)).toEqual([]);
  });

  it('the server unreachable after the unanswered append: WriteOutcomeUnknownError with the bound as its cause; resent, the original', async () => {
    const s = stream();
    const events = [ev({ n: 1 })];
    const held = pg.proxy.holdAnswerTo('es_append_v2', 'refuse');
    const error: unknown = await pg.store.appendToStream(s, events, { expectedRevision: 'no_stream' }).catch((e: unknown) => e);
    await held;
    pg.proxy.acceptAgain();
    expect(error).toBeInstanceOf(WriteOutcomeUnknownError);
    expect((error as WriteOutcomeUnknownError).mayHaveBeenWritten).toBe(true);
    expect((error as WriteOutcomeUnknownError).cause).toEqual(expect.objectContaining({ name: 'PostgresNoAnswerError', withinMs: BOUND_MS }));
    const again = await pg.store.appendToStream(s, events, { expectedRevision: 'no_stream' });
    const log = await pg.direct.readStream(s);
    expect(log.map((e) => e.id)).toEqual([events[0].id]);
    expect(again).toEqual({ nextExpectedRevision: 0n, position: log[0].position });
  });
});
