/**
 * The client-side bound on a PostgreSQL answer (pgfrozen): its length from the statement timeout, and the driver's
 * `query_timeout` error read as "no answer", which the store takes for a lost answer (a write is run again to learn
 * its outcome) and the service for the store unavailable.
 */
import { DatabaseError } from 'pg';
import { AnswerLostError, lostAnswerOf } from './lost-answer';
import { noAnswerOf, PostgresNoAnswerError } from './no-answer';
import { isPostgresUnavailable, mapPostgresError } from './postgres-errors';
import { answerTimeoutMs } from './postgres-settings';
import { EventStoreUnavailableError } from '../errors';

describe('answerTimeoutMs', () => {
  it('is the statement timeout + 5 s, and 65 s when the statement timeout is 0 (the role’s, unknown)', () => {
    expect([30_000, 2000, 1, 3_600_000, 0].map(answerTimeoutMs)).toEqual([35_000, 7000, 5001, 3_605_000, 65_000]);
  });

  it('refuses what is not a whole number of milliseconds, 0 or more', () => {
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => answerTimeoutMs(bad)).toThrow(RangeError);
  });
});

describe('noAnswerOf', () => {
  it('reads the driver’s query_timeout error as no answer within the bound, naming it', () => {
    const driver = new Error('Query read timeout');
    const mapped = noAnswerOf(driver, 7000);
    expect(mapped).toBeInstanceOf(PostgresNoAnswerError);
    expect(mapped).toMatchObject({ withinMs: 7000, cause: driver });
    expect((mapped as Error).message).toBe(
      'no answer from PostgreSQL to a statement within 7000 ms (the server is frozen, overloaded or unreachable: a hung host, a network partition); the connection was closed',
    );
    expect(noAnswerOf(mapped, 1)).toBe(mapped);
  });

  it('leaves every other error as it is (a server’s answer, a lost connection)', () => {
    const server = new DatabaseError('canceling statement due to statement timeout', 0, 'error');
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    for (const error of [server, reset, new Error('Query read timeout!'), 'Query read timeout', null]) expect(noAnswerOf(error, 7000)).toBe(error);
  });

  it('is a lost answer for a write (it may have committed) and the store unavailable for a read', () => {
    const noAnswer = new PostgresNoAnswerError(7000, new Error('Query read timeout'));
    const lost = lostAnswerOf(noAnswer);
    expect(lost).toBeInstanceOf(AnswerLostError);
    expect((lost as AnswerLostError).cause).toBe(noAnswer);
    expect(isPostgresUnavailable(noAnswer)).toBe(true);
    const mapped = mapPostgresError(noAnswer);
    expect(mapped).toBeInstanceOf(EventStoreUnavailableError);
    expect(mapped).toMatchObject({ cause: noAnswer, mayHaveBeenWritten: false, message: `PostgreSQL event store: ${noAnswer.message}` });
  });
});
