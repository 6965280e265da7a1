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
});
