import fc from 'fast-check';
import { MAX_CLIENT_TIME, MIN_CLIENT_TIME } from './client-time-rule';
import { hasSubMillisecond, utcExactTime, utcMillisTime } from './utc-time-text';

describe('utcExactTime and utcMillisTime', () => {
  it('keep the digits past the millisecond through an offset, up to 9', () => {
    expect(utcExactTime('2026-01-01T05:30:00.1234+05:30')).toBe('2026-01-01T00:00:00.123400000Z');
    expect(utcExactTime('2026-01-01T00:00:00-00:00')).toBe('2026-01-01T00:00:00.000000000Z');
    expect(utcExactTime('2025-12-31T23:59:59.999999999-00:01')).toBe('2026-01-01T00:00:59.999999999Z');
    expect(utcMillisTime('2026-01-01T05:30:00.123456789+05:30')).toBe('2026-01-01T00:00:00.123Z');
    expect(utcExactTime('yesterday')).toBe('yesterday');
  });

  it('write the accepted range (years 0001 to 9999) with a four-digit year, in order', () => {
    const earliest = utcExactTime(MIN_CLIENT_TIME);
    const latest = utcExactTime('9999-12-31T23:59:59.999999999Z');
    expect([earliest, latest]).toEqual(['0001-01-01T00:00:00.000000000Z', '9999-12-31T23:59:59.999999999Z']);
    expect(utcExactTime(MAX_CLIENT_TIME) < latest).toBe(true);
    expect(utcMillisTime('0001-01-01T00:00:00.0000001Z')).toBe('0001-01-01T00:00:00.000Z');
  });

  it('property: two times compare as text as their instants do (to the nanosecond)', () => {
    const time = fc.record({
      ms: fc.integer({ min: Date.parse(MIN_CLIENT_TIME) + 86_400_000, max: Date.parse(MAX_CLIENT_TIME) - 86_400_000 }),
      sub: fc.integer({ min: 0, max: 999_999 }),
      offset: fc.integer({ min: -1439, max: 1439 }),
    });
    const write = ({ ms, sub, offset }: { ms: number; sub: number; offset: number }) => {
      const local = new Date(ms + offset * 60_000).toISOString().slice(0, 23);
      const zone = `${offset < 0 ? '-' : '+'}${String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0')}:${String(Math.abs(offset) % 60).padStart(2, '0')}`;
      return `${local}${String(sub).padStart(6, '0')}${zone}`;
    };
    fc.assert(
      fc.property(time, time, (a, b) => {
        const [x, y] = [utcExactTime(write(a)), utcExactTime(write(b))];
        const instant = (t: { ms: number; sub: number }) => BigInt(t.ms) * 1_000_000n + BigInt(t.sub);
        expect(x < y).toBe(instant(a) < instant(b));
        expect(x === y).toBe(instant(a) === instant(b));
        expect(hasSubMillisecond(write(a))).toBe(a.sub !== 0);
      }),
    );
  });
});
