import fc from 'fast-check';
import { z } from 'zod';
import { clientTimeInRange } from '@lib/session';
import { CLIENT_DATE_TIME_PATTERN } from './client-time-pattern';

const pattern = new RegExp(CLIENT_DATE_TIME_PATTERN, 'u');
const isoDateTime = z.iso.datetime({ offset: true });
/** What the service accepts as a client date-time: ISO-8601 with Z or an offset, in range once in UTC. */
const accepted = (text: string) => isoDateTime.safeParse(text).success && clientTimeInRange(text);
const two = (n: number) => String(n).padStart(2, '0');

/** Date-times around the range's ends (and elsewhere), with any offset, some not dates at all (month 13, February 30). */
const dateTimes = fc
  .record({
    date: fc.constantFrom(
      '0000-12-31',
      '0000-01-01',
      '0000-06-15',
      '0001-01-01',
      '0001-01-02',
      '9999-12-31',
      '9999-12-30',
      '2026-02-29',
      '2024-02-29',
      '2026-13-01',
    ),
    hour: fc.integer({ min: 0, max: 24 }),
    minute: fc.integer({ min: 0, max: 59 }),
    second: fc.constantFrom('00', '30', '59', '59.999', '59.9999', '00.0001'),
    zone: fc.oneof(
      fc.constant('Z'),
      fc
        .record({ sign: fc.constantFrom('+', '-'), hours: fc.integer({ min: 0, max: 24 }), minutes: fc.integer({ min: 0, max: 59 }) })
        .map((o) => `${o.sign}${two(o.hours)}:${two(o.minutes)}`),
    ),
  })
  .map((t) => `${t.date}T${two(t.hour)}:${two(t.minute)}:${t.second}${t.zone}`);

describe('CLIENT_DATE_TIME_PATTERN: the OpenAPI pattern of a client date-time holds the range rule (years 0001 to 9999 once in UTC)', () => {
  it('matches exactly the date-times the service accepts', () => {
    fc.assert(
      fc.property(dateTimes, (text) => pattern.test(text) === accepted(text)),
      { numRuns: 20000 },
    );
  });

  it('agrees with the service on every local hour and offset hour on the days at the range ends (minutes at their edges)', () => {
    const disagreements: string[] = [];
    for (const day of ['0000-12-31', '0001-01-01', '9999-12-31'])
      for (let hour = 0; hour < 24; hour++)
        for (const minute of [0, 1, 29, 30, 31, 58, 59])
          for (const sign of ['+', '-'])
            for (let offsetHours = 0; offsetHours < 24; offsetHours++)
              for (const offsetMinutes of [0, 1, 29, 30, 31, 59]) {
                const text = `${day}T${two(hour)}:${two(minute)}:00${sign}${two(offsetHours)}:${two(offsetMinutes)}`;
                if (pattern.test(text) !== accepted(text)) disagreements.push(text);
              }
    expect(disagreements).toEqual([]);
  });

  it.each([
    ['0000-06-01T00:00:00Z', false],
    ['0000-12-31T23:59:59.999Z', false],
    ['0001-01-01T00:00:00+14:00', false],
    ['0001-01-01T13:59:59.999+14:00', false],
    ['9999-12-31T23:00:00-01:00', false],
    ['0000-12-31T23:00:00-05:00', true],
    ['0001-01-01T00:00:00Z', true],
    ['0001-01-01T14:00:00+14:00', true],
    ['9999-12-31T23:59:59.999Z', true],
    ['9999-12-31T22:59:59.9999-01:00', true],
  ])('%s: matched %s', (text, matched) => {
    expect([pattern.test(text), accepted(text)]).toEqual([matched, matched]);
  });
});
