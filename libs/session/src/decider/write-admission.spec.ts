import fc from 'fast-check';
import { admitWrite, checkWriteAdmission } from './write-admission';
import { RequestExpiredError, SessionErasedMeanwhileError } from '../errors';

describe('checkWriteAdmission: when a write may still start', () => {
  it('lets a write start only with its client there, within its deadline, in the life it arrived in (the first failing rule names the refusal)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.integer({ min: 100, max: 3_600_000 }),
        fc.integer({ min: 0, max: 4_000_000 }),
        fc.boolean(),
        fc.bigInt({ min: 0n, max: 50n }),
        fc.bigInt({ min: 0n, max: 3n }),
        (arrivedAtMs, deadlineMs, waitedMs, gone, atArrival, erasuresSince) => {
          const command = admitWrite({}, { arrivedAtMs, deadlineMs, clientGone: () => gone });
          const check = () => checkWriteAdmission(command, 's', { atArrival, now: atArrival + erasuresSince }, arrivedAtMs + waitedMs);
          if (gone || waitedMs > deadlineMs) {
            expect(check).toThrow(RequestExpiredError);
          } else if (erasuresSince > 0n) {
            expect(check).toThrow(SessionErasedMeanwhileError);
          } else {
            expect(check).not.toThrow();
          }
        },
      ),
    );
  });

  it("holds a command without an admission (the service's own, tests) to the life rule only", () => {
    expect(() => checkWriteAdmission({}, 's', { atArrival: 3n, now: 3n }, Number.MAX_SAFE_INTEGER)).not.toThrow();
    expect(() => checkWriteAdmission({}, 's', { atArrival: 3n, now: 7n }, 0)).toThrow(SessionErasedMeanwhileError);
  });

  it('answers with stable codes and the deadline', () => {
    const command = admitWrite({}, { arrivedAtMs: 0, deadlineMs: 1000, clientGone: () => false });
    try {
      checkWriteAdmission(command, 's', { atArrival: 0n, now: 0n }, 1500);
      throw new Error('not refused');
    } catch (err) {
      expect(err).toMatchObject({ code: 'request_expired', details: { deadlineMs: 1000 } });
      expect((err as Error).message).toContain('WRITE_DEADLINE_MS');
    }
    expect(() => checkWriteAdmission({}, 's', { atArrival: 0n, now: 1n }, 0)).toThrow(/was erased after this request arrived/);
    expect(new SessionErasedMeanwhileError('s').code).toBe('session_erased');
  });

  // It said "(the service is busy)" whatever made the request wait, its client's own slow upload included.
  it("says what the deadline counts from (the transport's words, else the arrival), and names no cause of the wait", () => {
    const refusal = (deadlineCountedFrom?: string): string => {
      const command = admitWrite({}, { arrivedAtMs: 0, deadlineMs: 1000, clientGone: () => false, deadlineCountedFrom });
      try {
        checkWriteAdmission(command, 's', { atArrival: 0n, now: 0n }, 1500);
      } catch (err) {
        return (err as Error).message;
      }
      throw new Error('not refused');
    };
    expect(refusal()).toMatch(
      /had not started 1500 ms after it arrived, past the 1000 ms write deadline \(WRITE_DEADLINE_MS\), counted from when this replica received the request;/,
    );
    expect(refusal('when the head came: a slow body counts')).toContain('counted from when the head came: a slow body counts;');
    expect(refusal()).not.toContain('busy');
  });
});
