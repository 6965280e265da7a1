import fc from 'fast-check';
import { exactOfRecordedAt } from './session-read-model-writer';
import { toIsoTime } from './iso-time';
import { utcExactTime } from '../domain/utc-time-text';

/**
 * The projector forms the 9-digit `created_at` of the time the store recorded an event from the
 * `Date.toISOString` text it already made, without parsing it: for any date, and for text that is
 * not such a date's, the result must be {@link utcExactTime}'s.
 */
describe('exactOfRecordedAt', () => {
  it('is utcExactTime of the recorded time for any date, years 0 to 275760 included', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date(-62_167_219_200_000), max: new Date(8.64e15), noInvalidDate: true }), (date) => {
        const recordedAt = toIsoTime(date);
        expect(exactOfRecordedAt(date, recordedAt)).toBe(utcExactTime(recordedAt));
      }),
      { numRuns: 2000 },
    );
  });

  it('is utcExactTime of the text when the time is not a Date, or an invalid one', () => {
    for (const text of ['2026-01-01T05:30:00.1234+05:30', '2026-01-01T00:00:00.000Z', 'not a time']) {
      expect(exactOfRecordedAt(text, toIsoTime(text))).toBe(utcExactTime(toIsoTime(text)));
    }
    expect(exactOfRecordedAt(new Date(NaN), toIsoTime(new Date(NaN)))).toBe(utcExactTime(''));
  });

  it('gives 9 fraction digits for a recorded time', () => {
    expect(exactOfRecordedAt(new Date('2026-12-03T14:05:06.789Z'), '2026-12-03T14:05:06.789Z')).toBe('2026-12-03T14:05:06.789000000Z');
  });
});
