import fc from 'fast-check';
import { MAX_CLIENT_TIME, MIN_CLIENT_TIME } from './client-time-rule';
import { hasSubMillisecond, isoTimeMillis, utcExactTime, utcMillisTime } from './utc-time-text';

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

describe('isoTimeMillis', () => {
  it('reads a fraction of 10 digits or more starting with 0 to the millisecond sent (Date.parse reads it up to 999 ms late)', () => {
    expect(new Date(isoTimeMillis('2026-12-03T12:00:00.0123456789Z')).toISOString()).toBe('2026-12-03T12:00:00.012Z');
    expect(new Date(isoTimeMillis(`2026-12-03T12:00:00.049${'0'.repeat(200)}Z`)).toISOString()).toBe('2026-12-03T12:00:00.049Z');
    expect(new Date(isoTimeMillis('2026-12-03T17:30:00.0009999999999+05:30')).toISOString()).toBe('2026-12-03T12:00:00.000Z');
    expect(new Date(isoTimeMillis('2026-12-03T12:00:00.5Z')).toISOString()).toBe('2026-12-03T12:00:00.500Z');
    expect(isoTimeMillis('yesterday')).toBeNaN();
  });

  it('property: any number of fraction digits, any offset: the instant cut to the millisecond, as utcExactTime and utcMillisTime write it', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.parse(MIN_CLIENT_TIME) + 86_400_000, max: Date.parse(MAX_CLIENT_TIME) - 86_400_000 }),
        // Fraction digits past the millisecond: none to many, often zeros (leading zeros are what Date.parse loses).
        fc.array(fc.oneof(fc.constant('0'), fc.constantFrom('1', '5', '9')), { maxLength: 40 }),
        fc.integer({ min: -1439, max: 1439 }),
        (ms, finer, offset) => {
          const local = new Date(ms + offset * 60_000).toISOString().slice(0, 23);
          const zone =
            offset === 0
              ? 'Z'
              : `${offset < 0 ? '-' : '+'}${String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0')}:${String(Math.abs(offset) % 60).padStart(2, '0')}`;
          const text = `${local}${finer.join('')}${zone}`;
          expect({ text, ms: isoTimeMillis(text) }).toEqual({ text, ms });
          expect({ text, utc: utcMillisTime(text) }).toEqual({ text, utc: new Date(ms).toISOString() });
          expect({ text, exact: utcExactTime(text).slice(0, 23) }).toEqual({ text, exact: new Date(ms).toISOString().slice(0, 23) });
        },
      ),
      { numRuns: 500 },
    );
  });
});
