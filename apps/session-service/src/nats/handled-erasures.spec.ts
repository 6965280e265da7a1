/**
 * The erasure records the decisions feed handled, as the consumer's last check reads them
 * ({@link HandledErasures}): the rule of `erasesAnswer`, per session, for a bounded time and number
 * of sessions (the clock is the test's).
 */
import { HandledErasures } from './handled-erasures';
import type { AnswerBasis } from './answer-basis';

const basis = (revision: bigint, position: bigint): AnswerBasis => ({ revision, position, event: null });

describe('HandledErasures', () => {
  it('takes the answers of the erased life and earlier ones by revision, not those of the life written again', () => {
    const erasures = new HandledErasures();
    erasures.noted('t', 's', { position: 10n, rows: { kind: 'upToRevision', lastRevision: 3n } });
    expect(erasures.takes('t', 's', basis(3n, 9n))).toBe(true);
    expect(erasures.takes('t', 's', basis(4n, 5n))).toBe(false);
    expect(erasures.takes('t', 'other', basis(0n, 1n))).toBe(false);
    expect(erasures.takes('u', 's', basis(0n, 1n))).toBe(false);
    // Without a basis: taken by any erasure of its session, as the feed's deletion takes it.
    expect(erasures.takes('t', 's', undefined)).toBe(true);
  });

  it('takes by position the answers decided before a record of an older build (without lastRevision), and keeps the strongest bound of each rule', () => {
    const erasures = new HandledErasures();
    erasures.noted('t', 's', { position: 10n, rows: { kind: 'beforePosition', before: 10n } });
    erasures.noted('t', 's', { position: 20n, rows: { kind: 'upToRevision', lastRevision: 5n } });
    erasures.noted('t', 's', { position: 30n, rows: { kind: 'upToRevision', lastRevision: 2n } });
    expect(erasures.takes('t', 's', basis(9n, 9n))).toBe(true);
    expect(erasures.takes('t', 's', basis(5n, 25n))).toBe(true);
    expect(erasures.takes('t', 's', basis(6n, 31n))).toBe(false);
  });

  it('forgets a record after its keep time, and the oldest session beyond its bound', () => {
    let now = 0;
    const erasures = new HandledErasures(1000, 2, () => now);
    const erasure = { position: 10n, rows: { kind: 'upToRevision' as const, lastRevision: 3n } };
    erasures.noted('t', 'a', erasure);
    now = 500;
    erasures.noted('t', 'b', erasure);
    erasures.noted('t', 'c', erasure);
    expect(['a', 'b', 'c'].map((s) => erasures.takes('t', s, basis(1n, 1n)))).toEqual([false, true, true]);
    now = 1501;
    expect(['b', 'c'].map((s) => erasures.takes('t', s, basis(1n, 1n)))).toEqual([false, false]);
  });
});
