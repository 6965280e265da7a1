import { DatabaseError } from 'pg';
import { EventStoreUnavailableError, WriteOutcomeUnknownError, WrongExpectedRevisionError } from '../errors';
import { AnswerLostError, lostAnswerOf, withKnownOutcome } from './lost-answer';

const serverError = (code: string) => Object.assign(new DatabaseError('terminating connection due to administrator command', 100, 'error'), { code });
const options = (withinMs = 5000) => ({ write: 'append' as const, stream: 'session-x', withinMs, closed: () => false });

describe('lostAnswerOf: which failures of a sent statement leave its outcome unknown', () => {
  it('a connection that ended without an answer (driver or socket error) is a lost answer', () => {
    for (const error of [
      new Error('Connection terminated unexpectedly'),
      Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
      Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }),
    ]) {
      const lost = lostAnswerOf(error);
      expect(lost).toBeInstanceOf(AnswerLostError);
      expect((lost as AnswerLostError).cause).toBe(error);
    }
  });

  it("an error the server answered (a SQLSTATE, also a shutdown's 57P01 or a standby's 25006) is not: the statement was rolled back", () => {
    for (const code of ['57P01', '25006', '23505', '08006']) {
      const error = serverError(code);
      expect(lostAnswerOf(error)).toBe(error);
    }
  });

  it('the port’s own errors and bugs are not', () => {
    const conflict = new WrongExpectedRevisionError('s', 1n, 2n);
    const bug = new TypeError('x is undefined');
    expect(lostAnswerOf(conflict)).toBe(conflict);
    expect(lostAnswerOf(bug)).toBe(bug);
  });
});

describe('withKnownOutcome', () => {
  const lost = () => new AnswerLostError(new Error('Connection terminated unexpectedly'));

  it('answers without running again when the first run answers, whatever it answers', async () => {
    const runs: boolean[] = [];
    await expect(withKnownOutcome(async (rerun) => (runs.push(rerun), 7), options())).resolves.toBe(7);
    const conflict = new WrongExpectedRevisionError('s', 1n, 2n);
    await expect(
      withKnownOutcome(async (rerun) => {
        runs.push(rerun);
        throw conflict;
      }, options()),
    ).rejects.toBe(conflict);
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    await expect(
      withKnownOutcome(async (rerun) => {
        runs.push(rerun);
        throw refused; // nothing was sent: answered at once
      }, options()),
    ).rejects.toBe(refused);
    expect(runs).toEqual([false, false, false]);
  });

  it("after a lost answer, runs again (as a re-run) until one answers: that answer is the write's", async () => {
    const results: Array<() => unknown> = [
      () => {
        throw lost();
      },
      () => {
        throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      },
      () => {
        throw new EventStoreUnavailableError('PostgreSQL event store: timeout exceeded when trying to connect');
      },
      () => {
        throw lost();
      },
      () => 'original result',
    ];
    const runs: boolean[] = [];
    await expect(withKnownOutcome(async (rerun) => (runs.push(rerun), results.shift()!()), options())).resolves.toBe('original result');
    expect(runs).toEqual([false, true, true, true, true]);

    const conflict = new WrongExpectedRevisionError('s', 1n, 2n);
    const second: Array<() => unknown> = [
      () => {
        throw lost();
      },
      () => {
        throw conflict;
      },
    ];
    await expect(withKnownOutcome(async () => second.shift()!(), options())).rejects.toBe(conflict);
  });

  it('answers WriteOutcomeUnknownError (a 503 saying the write may have been written) when no run answers in time, or the store closed', async () => {
    const failed = await withKnownOutcome(async () => {
      throw lost();
    }, options(100)).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(WriteOutcomeUnknownError);
    expect(failed).toBeInstanceOf(EventStoreUnavailableError);
    expect((failed as Error).message).toBe(
      "PostgreSQL event store: the connection was lost after the append to session-x was sent, before the server's answer, and the server could not be reached again within 100 ms to find out whether it was done, so it may have been written or not: send the same append again unchanged (with the same event ids it is answered as the original when it was written, and written now when it was not); the connection: Connection terminated unexpectedly",
    );
    let runs = 0;
    const closed = await withKnownOutcome(
      async () => {
        runs++;
        throw lost();
      },
      { ...options(), closed: () => true },
    ).catch((e: unknown) => e);
    expect({ closed, runs }).toEqual({ closed: expect.any(WriteOutcomeUnknownError), runs: 1 });
  });
});
