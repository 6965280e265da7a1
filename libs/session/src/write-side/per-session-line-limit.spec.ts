/**
 * At most one line of a kind per session per interval (newcomer ncrace74: up to 482 identical unmet-trigger warn lines per
 * session in 45 s): given a clock, when lines come, then the first is written, those within the interval are withheld and
 * counted, and the next one written says how many were not.
 */
import fc from 'fast-check';
import { PerSessionLineLimit } from './per-session-line-limit';

describe('PerSessionLineLimit', () => {
  it('writes the first line of a session, withholds the next ones for the interval, then writes one saying how many were withheld', () => {
    let now = 1_000;
    const limit = new PerSessionLineLimit(60_000, () => now);
    expect(limit.admit('a')).toBe(0);
    now += 10;
    expect(limit.admit('a')).toBeNull();
    expect(limit.admit('b')).toBe(0); // another session is its own
    now += 59_989;
    expect(limit.admit('a')).toBeNull();
    now += 1;
    expect(limit.admit('a')).toBe(2);
    now += 60_000;
    expect(limit.admit('a')).toBe(0);
  });

  it('forgets every session past its bound, so the next line of each is written at once', () => {
    const limit = new PerSessionLineLimit(60_000, () => 0, 2);
    expect(limit.admit('a')).toBe(0);
    expect(limit.admit('b')).toBe(0);
    expect(limit.admit('c')).toBe(0);
    expect(limit.admit('a')).toBe(0);
  });

  it('for any times of one session: lines written are at least the interval apart, and every line is written or counted once', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 200_000 }), { minLength: 1, maxLength: 60 }), (gaps) => {
        let now = 0;
        const limit = new PerSessionLineLimit(60_000, () => now);
        const written: number[] = [];
        let counted = 0;
        let lastWritten = -1;
        gaps.forEach((gap, i) => {
          now += gap;
          const withheld = limit.admit('s');
          if (withheld === null) return;
          counted += 1 + withheld;
          written.push(now);
          lastWritten = i;
        });
        expect(written[0]).toBe(gaps[0]);
        for (let i = 1; i < written.length; i++) expect(written[i] - written[i - 1]).toBeGreaterThanOrEqual(60_000);
        // every line is written, or counted in the next line written, or after the last one written
        expect(counted + (gaps.length - 1 - lastWritten)).toBe(gaps.length);
      }),
    );
  });
});
