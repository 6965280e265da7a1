import fc from 'fast-check';
import { z } from 'zod';
import { emptyFilterMessage, emptyOptionalsAsAbsent, identityFilter, identityFilterAdvice, validateQuery } from './validate';
import { dateTimeParamMessage, hasSpaceForPlusOffset, requestSchemas } from './request-schemas';
import { compactionListQuery, sessionListQuery } from './history-query-schemas';
import { InvalidQueryError } from '../../../../libs/session/src/read-side/invalid-query-error';
import type { InvalidRequestError } from '@lib/session';
import { decodeKeysetCursor } from '../../../../libs/session/src/read-side/keyset-cursor';
import { encodeRecallCursor } from '../../../../libs/session/src/read-side/recall-cursor';
import { utcExactTime } from '../../../../libs/session/src/domain/utc-time-text';

describe('emptyOptionalsAsAbsent: an optional query parameter sent empty counts as absent', () => {
  const schema = z.strictObject({ q: z.string().min(1, { message: 'give a word' }), cursor: z.string().optional(), limit: z.string().optional() });

  it('drops empty optional parameters only, and returns the query itself when none is empty', () => {
    const query = { q: '', cursor: '', limit: '5', other: '' };
    expect(emptyOptionalsAsAbsent(schema.shape, query)).toEqual({ q: '', limit: '5', other: '' });
    const full = { q: 'a', cursor: 'x' };
    expect(emptyOptionalsAsAbsent(schema.shape, full)).toBe(full);
  });

  it('validateQuery: an empty cursor is no cursor; an empty required parameter keeps its error; an unknown one stays unknown', () => {
    expect(validateQuery(schema, { q: 'a', cursor: '' })).toEqual({ q: 'a' });
    expect(() => validateQuery(schema, { q: '', cursor: '' })).toThrow('q: give a word');
    expect(() => validateQuery(schema, { q: 'a', other: '' })).toThrow(/unknown query parameter "other"/);
  });
});

describe('emptyOptionalsAsAbsent: an identity filter sent empty is refused, not absent (newcomer F2)', () => {
  const advice = { give: 'a session id', without: 'search every session of the tenant' };
  const schema = z.strictObject({ q: z.string(), sessionId: identityFilter(z.string().optional(), advice), cursor: z.string().optional() });
  const refusal = (query: Record<string, unknown>, codes?: Record<string, 'invalid_session_id'>) => {
    try {
      validateQuery(schema, query, codes);
    } catch (error) {
      const { code, parameter, message } = error as InvalidRequestError;
      return { code, parameter, message };
    }
    return undefined;
  };
  const message = 'sessionId: is empty: give a session id, or leave the parameter out to search every session of the tenant';

  it('refuses it alone or among several occurrences, with the code a malformed value of it gets; the others stay absent', () => {
    expect(refusal({ q: 'a', sessionId: '', cursor: '' })).toEqual({ code: 'validation_failed', parameter: 'sessionId', message });
    expect(refusal({ q: 'a', sessionId: ['', 's1'] }, { sessionId: 'invalid_session_id' })).toEqual({
      code: 'invalid_session_id',
      parameter: 'sessionId',
      message,
    });
    expect(refusal({ q: 'a', sessionId: ['s1', 's2'] })).toMatchObject({ message: 'sessionId: is given 2 times: send it once' });
    expect(validateQuery(schema, { q: 'a', sessionId: 's1', cursor: '' })).toEqual({ q: 'a', sessionId: 's1' });
  });

  it('marks the shared definition, so a copy .describe() makes is one too; the service marks exactly its four filters', () => {
    expect(identityFilterAdvice(schema.shape.sessionId.describe('x'))).toBe(advice);
    expect(identityFilterAdvice(schema.shape.cursor)).toBeUndefined();
    const { recallQuery } = requestSchemas({ maxEventsPerRequest: 100, maxTextLength: 100_000 });
    const marked = (shape: Record<string, unknown>) => Object.keys(shape).filter((name) => identityFilterAdvice(shape[name]));
    expect(marked(recallQuery.shape)).toEqual(['sessionId', 'userId', 'compactionId']);
    expect(marked(sessionListQuery.shape)).toEqual(['userId']);
    expect(marked(compactionListQuery.shape)).toEqual([]);
    expect(emptyFilterMessage('userId', identityFilterAdvice(sessionListQuery.shape.userId)!)).toBe(
      'userId: is empty: give a user id, or leave the parameter out to list the sessions of every user of the tenant',
    );
  });
});

describe('date-time query parameters: a "+" offset that arrived as a space', () => {
  it.each([
    ['2026-01-01T00:00:00 01:00', true],
    ['2026-01-01T00:00:00.250 05:30', true],
    ['2026-01-01T00:00:00+01:00', false],
    ['2026-01-01T00:00:00 0100', false],
    ['2026-01-01 00:00:00Z', false],
    ['yesterday', false],
  ])('%s → %s', (text, expected) => {
    expect(hasSpaceForPlusOffset(text)).toBe(expected);
  });

  it('says to send the + as %2B, showing the value so encoded', () => {
    expect(dateTimeParamMessage('2026-01-01T00:00:00 01:00')).toMatch(/send the \+ as %2B \(2026-01-01T00:00:00%2B01:00\)/);
    expect(dateTimeParamMessage('yesterday')).toBe('must be an ISO-8601 date-time such as 2026-01-31T12:00:00Z (a "+hh:mm" offset sent as %2Bhh:mm)');
  });
});

describe('date-time query parameters: years 0001 to 9999 once in UTC, as the read models keep times', () => {
  const { recallQuery } = requestSchemas({ maxEventsPerRequest: 100, maxTextLength: 100_000 });
  const range = 'must be from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z once in UTC (years 0001 to 9999, as times are kept and answered in UTC)';

  it.each([
    ['from', '0000-01-01T00:00:00Z'],
    ['from', '0001-01-01T00:00:00+01:00'],
    ['to', '9999-12-31T23:30:00-01:00'],
  ])('recall %s=%s: 400 saying the range', (name, value) => {
    expect(() => validateQuery(recallQuery, { q: 'a', [name]: value })).toThrow(`${name}: ${range}`);
  });

  it('updatedSince follows the same rule; the range ends are accepted', () => {
    expect(() => validateQuery(sessionListQuery, { updatedSince: '0000-12-31T23:59:59Z' })).toThrow(`updatedSince: ${range}`);
    expect(validateQuery(sessionListQuery, { updatedSince: '0001-01-01T00:00:00Z' })).toEqual({ updatedSince: '0001-01-01T00:00:00Z' });
    expect(validateQuery(recallQuery, { q: 'a', from: '0001-01-01T00:00:00Z', to: '9999-12-31T23:59:59.999Z' })).toMatchObject({
      to: '9999-12-31T23:59:59.999Z',
    });
  });
});

describe('date-time query parameters say what to fix (newcomer nctime, F7)', () => {
  const { recallQuery } = requestSchemas({ maxEventsPerRequest: 100, maxTextLength: 100_000 });
  const message = (query: Record<string, string>): string => {
    try {
      validateQuery(recallQuery, query);
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error('no error');
  };

  it.each([
    ['from', '2026-01-01T00:00:00', /from: .*add its zone: "Z" when it is UTC, else its offset \(%2Bhh:mm/],
    ['to', '2016-12-31T23:59:60Z', /to: .*second 60 \(a leap second\)/],
    // a leap second with a fraction is second 60 too (newcomer ncevaleng A1): the same advice, its fraction dropped
    ['from', '2016-12-31T23:59:60.5Z', /from: .*second 60 \(a leap second\).*\(e\.g\. 2016-12-31T23:59:59\.999Z\)$/],
    ['to', '2016-12-31T23:59:60.999%2B05:30'.replace('%2B', '+'), /to: .*second 60 \(a leap second\).*\(e\.g\. 2016-12-31T23:59:59\.999%2B05:30\)$/],
    ['from', '2026-01-01t00:00:00z', /from: .*upper case/],
    ['from', '2026-01-01 00:00:00Z', /from: .*write a "T" between date and time, not a space \(e\.g\. 2026-01-01T00:00:00Z\)$/],
    ['from', '2026-01-01T00:00Z', /from: .*add the seconds \(hh:mm:ss\) \(e\.g\. 2026-01-01T00:00:00Z\)$/],
    ['to', '2026-01-01T00:00:00-0530', /to: .*write the offset with a colon \(-05:30, as ±hh:mm\) \(e\.g\. 2026-01-01T00:00:00-05:30\)$/],
    [
      'to',
      '2026-01-01T00:00:00 0530',
      /to: .*send the \+ as %2B; write the offset with a colon \(%2B05:30, as ±hh:mm\) \(e\.g\. 2026-01-01T00:00:00%2B05:30\)$/,
    ],
    // ISO-8601's expanded year in range: the sign is named, not the range (newcomer ncfresh70 N3)
    ['to', '+2026-12-06T21:05:31Z', /to: must be an ISO-8601 date-time: write the year as four digits, without a sign .*\(e\.g\. 2026-12-06T21:05:31Z\)$/],
    ['from', '+002026-12-06T21:05:31Z', /from: .*without a sign .*\(e\.g\. 2026-12-06T21:05:31Z\)$/],
    [
      'from',
      '1798761600000',
      new RegExp(`from: .*not a number: a number of milliseconds since 1970.*\\(e\\.g\\. ${new Date(1798761600000).toISOString().replace(/\./g, '\\.')}\\)$`),
    ],
  ])('%s=%s: the message names the fix', (name, value, fix) => {
    expect(message({ q: 'a', [name]: value })).toMatch(fix);
    expect(() => validateQuery(sessionListQuery, { updatedSince: value })).toThrow(new RegExp(`updatedSince: ${fix.source.replace(/^\w+: /, '')}`));
  });

  it('property: a time that misses only its zone, its upper case or a leap second is told the fix, and the example given is accepted', () => {
    const { nativeEvent } = requestSchemas({ maxEventsPerRequest: 100, maxTextLength: 100_000 });
    const spoil = fc.record({ zone: fc.boolean(), lower: fc.boolean(), leap: fc.boolean() }).filter((f) => f.zone || f.lower || f.leap);
    fc.assert(
      fc.property(fc.date({ min: new Date('0001-01-02T00:00:00Z'), max: new Date('9999-12-30T00:00:00Z'), noInvalidDate: true }), spoil, (date, f) => {
        let text = date.toISOString();
        if (f.leap) text = text.replace(/:\d\d\.\d{3}Z$/, ':60Z');
        if (f.zone) text = text.slice(0, -1);
        if (f.lower) text = text.toLowerCase();
        const parsed = nativeEvent.safeParse({ type: 'user', text: 'x', createdAt: text });
        expect(parsed.success).toBe(false);
        const said = parsed.error!.issues[0].message;
        for (const [spoilt, fix] of [
          [f.zone, /add its zone/],
          [f.lower, /upper case/],
          [f.leap, /second 60/],
        ] as const)
          if (spoilt) expect(said).toMatch(fix);
        const example = /\(e\.g\. ([^ ()]+)\)$/.exec(said)?.[1];
        expect(nativeEvent.safeParse({ type: 'user', text: 'x', createdAt: example }).success).toBe(true);
        if (!f.leap) expect(Date.parse(example!)).toBe(date.getTime());
      }),
      { numRuns: 200 },
    );
  });

  it('property: every digit string (any length, past 2^53 and past a double too) is told Unix time is not read, with an example that is accepted', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^-?[0-9]{1,400}$/), fc.constantFrom('from', 'to'), (digits, name) => {
        const said = message({ q: 'a', [name]: digits });
        expect(said).toMatch(
          new RegExp(
            `^${name}: must be an ISO-8601 date-time as text, not a number: a number of milliseconds since 1970-01-01T00:00:00Z \\(Unix time\\) is not read`,
          ),
        );
        const example = /\(e\.g\. ([^ ()]+)\)$/.exec(said)![1];
        expect(() => validateQuery(recallQuery, { q: 'a', [name]: example })).not.toThrow();
        expect(() => validateQuery(sessionListQuery, { updatedSince: digits })).toThrow(said.replace(/^\w+: /, ''));
      }),
      { numRuns: 300 },
    );
    expect(message({ q: 'a', from: '99999999999999999999' })).toMatch(/Unix time.*\(e\.g\. 2026-01-31T12:00:00Z\)$/);
  });

  describe('a date or time that does not exist, or no time at all (newcomer ncincident, F3)', () => {
    const { windowQuery, nativeEvent } = requestSchemas({ maxEventsPerRequest: 100, maxTextLength: 100_000 });
    /** The message for `text` as atTime (a query parameter) and as an event's createdAt (a body field), without the name. */
    const said = (text: string) => {
      let atTime = '';
      try {
        validateQuery(windowQuery, { atTime: text });
      } catch (error) {
        atTime = (error as Error).message.replace(/^atTime: /, '');
      }
      const createdAt = nativeEvent.safeParse({ type: 'user', text: 'x', createdAt: text });
      return { atTime, createdAt: createdAt.success ? '' : createdAt.error.issues[0].message };
    };

    it.each([
      ['2026-02-30T00:00:00Z', 'there is no day 30 in February 2026 (it has 28 days)', '2026-02-28T00:00:00Z'],
      ['2024-02-30T12:00:00Z', 'there is no day 30 in February 2024 (it has 29 days)', '2024-02-29T12:00:00Z'],
      ['2026-04-31T08:00:00.5Z', 'there is no day 31 in April 2026 (it has 30 days)', '2026-04-30T08:00:00.5Z'],
      ['2026-12-03T25:00:00Z', 'hour 25 is out of range (hours run from 00 to 23; midnight at the end of a day is 00 of the next)', '2026-12-03T23:00:00Z'],
      ['2026-12-03T10:75:00Z', 'minute 75 is out of range (00 to 59)', '2026-12-03T10:59:00Z'],
      ['2026-13-01T00:00:00Z', 'month 13 does not exist (months run from 01 to 12)', '2026-12-01T00:00:00Z'],
      ['2026-12-00T00:00:00Z', 'day 00 does not exist (days start at 01)', '2026-12-01T00:00:00Z'],
      ['2026-12-03', 'the time is missing (a date alone names no instant): add T00:00:00Z for midnight UTC', '2026-12-03T00:00:00Z'],
      ['2026-12-03Z', 'the time is missing (a date alone names no instant): add T00:00:00 before the zone for midnight', '2026-12-03T00:00:00Z'],
      [
        '2026-02-30T10:00:00',
        'there is no day 30 in February 2026 (it has 28 days); add its zone: "Z" when it is UTC, else its offset (+hh:mm, e.g. +05:30), as a time without one names no instant',
        '2026-02-28T10:00:00Z',
      ],
    ])('%s: says what is wrong, with the time so fixed as the example, for atTime and createdAt alike', (text, fault, example) => {
      const { atTime, createdAt } = said(text);
      expect(createdAt).toBe(`must be an ISO-8601 date-time: ${fault} (e.g. ${example})`);
      expect(atTime).toBe(createdAt.replace(/\+/g, '%2B'));
      expect(nativeEvent.safeParse({ type: 'user', text: 'x', createdAt: example }).success).toBe(true);
    });

    it("property: a day past its month's last, or an hour past 23, is named, and the example is the nearest time that exists", () => {
      fc.assert(
        fc.property(
          // in years 0001 and 9999 an offset could take the fixed time out of range (another message)
          fc.date({ min: new Date('0002-01-01T00:00:00Z'), max: new Date('9998-12-31T00:00:00Z'), noInvalidDate: true }),
          fc.oneof(fc.record({ day: fc.integer({ min: 1, max: 68 }) }), fc.record({ hour: fc.integer({ min: 24, max: 99 }) })),
          fc.constantFrom('Z', '+05:30', '-08:00'),
          (date, spoil, zone) => {
            const good = date.toISOString().slice(0, 19);
            const [year, month] = [date.getUTCFullYear(), date.getUTCMonth() + 1];
            const last = new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !(year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)) ? 1 : 0);
            const two = (n: number) => String(n).padStart(2, '0');
            const day = 'day' in spoil ? last + spoil.day : undefined;
            const hour = 'hour' in spoil ? spoil.hour : undefined;
            if (day !== undefined && day > 99) return;
            const text =
              day !== undefined ? `${good.slice(0, 8)}${two(day)}${good.slice(10)}${zone}` : `${good.slice(0, 11)}${two(hour!)}${good.slice(13)}${zone}`;
            const fixed = day !== undefined ? `${good.slice(0, 8)}${two(last)}${good.slice(10)}${zone}` : `${good.slice(0, 11)}23${good.slice(13)}${zone}`;
            const { atTime, createdAt } = said(text);
            expect(createdAt).toMatch(
              day !== undefined ? new RegExp(`(no day ${day} in|day ${day} is out of range)`) : new RegExp(`hour ${hour} is out of range`),
            );
            expect(createdAt).toMatch(new RegExp(`\\(e\\.g\\. ${fixed.replace(/[.+]/g, '\\$&')}\\)$`));
            expect(atTime).toBe(createdAt.replace(/\+/g, '%2B'));
            expect(nativeEvent.safeParse({ type: 'user', text: 'x', createdAt: fixed }).success).toBe(true);
          },
        ),
        { numRuns: 300 },
      );
    });
  });

  it('takes any number of fraction digits (docs/http-api.md, Date-times in queries: those past the ninth are ignored)', () => {
    const { windowQuery } = requestSchemas({ maxEventsPerRequest: 100, maxTextLength: 100_000 });
    for (const digits of ['1', '123456789', '123456789012', '1'.repeat(40)]) {
      expect(() => validateQuery(recallQuery, { q: 'a', from: `2026-01-01T00:00:00.${digits}Z` })).not.toThrow();
      expect(() => validateQuery(windowQuery, { atTime: `2026-01-01T00:00:00.${digits}+05:30` })).not.toThrow();
    }
    expect(utcExactTime('2026-01-01T00:00:00.123456789999Z')).toBe('2026-01-01T00:00:00.123456789Z');
  });

  it('to=10000-…: the range message, as year 0000 gets', () => {
    expect(message({ q: 'a', to: '10000-01-01T00:00:00Z' })).toBe(message({ q: 'a', to: '0000-01-01T00:00:00Z' }));
    expect(message({ q: 'a', to: '10000-01-01T00:00:00Z' })).toMatch(/to: must be from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z/);
  });
});

describe('cursor errors read alike wherever they are found (newcomer report ncrecall, item 5)', () => {
  const { recallQuery } = requestSchemas({ maxEventsPerRequest: 100, maxTextLength: 100_000 });
  const message = (run: () => unknown): string => {
    try {
      run();
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error('no error');
  };

  it('given an over-long cursor (schema) or a malformed one (decoder), then both say "is not a cursor; pass …"', () => {
    const long = 'A'.repeat(5000);
    expect(message(() => validateQuery(recallQuery, { q: 'a', cursor: long }))).toBe(
      'cursor: is not a cursor; pass the nextCursor of the previous page unchanged, with the same q and filters',
    );
    expect(message(() => validateQuery(sessionListQuery, { cursor: long }))).toBe(
      'cursor: is not a cursor; pass the nextCursor of the previous page unchanged',
    );
    expect(message(() => validateQuery(compactionListQuery, { cursor: long }))).toBe(
      'cursor: is not a cursor; pass the nextCursor of the previous page unchanged',
    );
    const decoded = message(() => decodeKeysetCursor('compactions', 'not!'));
    // Over the longest cursor any route makes: no cursor of this service.
    expect(message(() => validateQuery(sessionListQuery, { cursor: 'A'.repeat(2049) }))).toBe(
      'cursor: is not a cursor; pass the nextCursor of the previous page unchanged',
    );
    expect(decoded).toContain('is not a cursor; pass the nextCursor of the previous page unchanged');
    expect(() => decodeKeysetCursor('compactions', 'not!')).toThrow(InvalidQueryError);
  });
});

describe('a recall cursor over 256 characters sent to a list route (newcomer report apileft2, item 5)', () => {
  it("passes the list schema and is named as recall's by the decoder, as a shorter one is", () => {
    const phrases = Array.from({ length: 32 }, (_, i) => ({ index: i, rows: 1000 + i }));
    const recall = encodeRecallCursor({
      fingerprint: 'f'.repeat(43),
      order: 'relevance',
      asOf: 123456789n,
      position: 123456n,
      rank: -12.345678901234,
      stats: { rows: 987654, tokens: 12345678, phrases },
    });
    expect(recall.length).toBeGreaterThan(256);
    for (const [schema, list] of [
      [sessionListQuery, 'sessions'],
      [compactionListQuery, 'compactions'],
    ] as const) {
      const { cursor } = validateQuery(schema, { cursor: recall }) as { cursor: string };
      expect(() => decodeKeysetCursor(list, cursor)).toThrow('cursor: this cursor belongs to GET /v1/recall; pass the nextCursor this route gave');
    }
  });
});
