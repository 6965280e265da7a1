import fc from 'fast-check';
import { z } from 'zod';
import { InvalidRequestError } from '@lib/session';
import { BOOLEAN_QUERY_PATTERN, BOOLEAN_QUERY_RULE, isBooleanQueryParam, parseBooleanQuery } from './boolean-query-param';
import { requestSchemas } from './request-schemas';
import { compactionListQuery, erasureListQuery, minPositionQuery, sessionListQuery, sessionQuery } from './history-query-schemas';
import { queryParametersJsonSchema } from './openapi-schemas';
import { validateQuery } from './validate';

const { recallQuery, windowQuery, logQuery } = requestSchemas({ maxEventsPerRequest: 100, maxTextLength: 100_000 });
/** Every query schema a route validates with. */
const QUERY_SCHEMAS = { recallQuery, windowQuery, logQuery, sessionListQuery, sessionQuery, minPositionQuery, compactionListQuery, erasureListQuery };

/** `word` with each letter in the case `upper` says. */
const cased = (word: string, upper: boolean[]) => [...word].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('');
const anyCase = (word: string) => fc.array(fc.boolean(), { minLength: word.length, maxLength: word.length }).map((upper) => cased(word, upper));
const accepted = fc.oneof(
  anyCase('true').map((text) => ({ text, value: true })),
  anyCase('false').map((text) => ({ text, value: false })),
  fc.constant({ text: '1', value: true }),
  fc.constant({ text: '0', value: false }),
);

function refusal(query: Record<string, unknown>): InvalidRequestError {
  try {
    validateQuery(recallQuery, query, { q: 'invalid_query' });
  } catch (e) {
    if (e instanceof InvalidRequestError) return e;
    throw e;
  }
  throw new Error(`accepted ${JSON.stringify(query)}`);
}

describe('boolean query parameters: true/false in any letter case, or 1/0 (recall archived=True, as Python sends it)', () => {
  it.each([
    ['True', true],
    ['TRUE', true],
    ['true', true],
    ['1', true],
    ['False', false],
    ['FALSE', false],
    ['false', false],
    ['0', false],
  ])('archived=%s → %s', (text, value) => {
    expect(validateQuery(recallQuery, { q: 'a', archived: text })).toMatchObject({ archived: value });
  });

  it('property: every letter case of true and false, and 1 and 0, is read as its boolean', () => {
    fc.assert(
      fc.property(accepted, ({ text, value }) => {
        expect(parseBooleanQuery(text)).toBe(value);
        expect(validateQuery(recallQuery, { q: 'a', archived: text }).archived).toBe(value);
      }),
    );
  });

  it('property: any other text is 400 validation_failed naming the parameter and listing what is accepted', () => {
    const other = fc.oneof(fc.string(), fc.constantFrom('yes', 'no', 'on', 'off', '01', '00', ' true', 'true ', 'truth', 't', 'f', '2', '-1', '1.0'));
    fc.assert(
      fc.property(
        other.filter((s) => s !== '' && parseBooleanQuery(s) === undefined),
        (text) => {
          const e = refusal({ q: 'a', archived: text });
          expect([e.code, e.parameter, e.message]).toEqual(['validation_failed', 'archived', `archived: ${BOOLEAN_QUERY_RULE}`]);
        },
      ),
    );
    expect(BOOLEAN_QUERY_RULE).toBe('must be true or false (any letter case, e.g. True) or 1 or 0');
  });

  it('given twice, or empty: as every query parameter (twice: 400; empty: absent)', () => {
    expect(refusal({ q: 'a', archived: ['true', 'false'] }).message).toBe('archived: is given 2 times: send it once');
    expect(validateQuery(recallQuery, { q: 'a', archived: '' })).toEqual({ q: 'a' });
  });

  it('repeated with empty occurrences: the empty ones count as absent (archived=&archived=true is archived=true)', () => {
    expect(validateQuery(recallQuery, { q: 'a', archived: ['', 'true'] })).toEqual({ q: 'a', archived: true });
    expect(validateQuery(recallQuery, { q: 'a', archived: ['false', ''] })).toEqual({ q: 'a', archived: false });
    expect(validateQuery(recallQuery, { q: 'a', archived: ['', ''] })).toEqual({ q: 'a' });
    expect(refusal({ q: 'a', archived: ['true', '', 'true'] }).message).toBe('archived: is given 2 times: send it once');
  });

  it('property: the OpenAPI pattern accepts exactly the texts the parameter accepts', () => {
    const pattern = new RegExp(BOOLEAN_QUERY_PATTERN);
    fc.assert(
      fc.property(
        fc.oneof(
          accepted.map((a) => a.text),
          fc.string(),
          anyCase('truefalse'),
        ),
        (text) => {
          expect(pattern.test(text)).toBe(parseBooleanQuery(text) !== undefined);
        },
      ),
    );
  });

  it('the OpenAPI document declares archived as a boolean or its text by that pattern, its description kept', () => {
    const archived = queryParametersJsonSchema(recallQuery).properties?.archived;
    expect(archived).toEqual({
      description: expect.stringMatching(/^true: only events a compaction archived/),
      anyOf: [{ type: 'boolean' }, { type: 'string', pattern: BOOLEAN_QUERY_PATTERN, description: expect.stringContaining('any letter case') }],
    });
  });

  it('every boolean query parameter of every route follows this one rule', () => {
    const booleans: string[] = [];
    for (const [schemaName, schema] of Object.entries(QUERY_SCHEMAS)) {
      const shape = (schema as unknown as { shape: Record<string, z.ZodType> }).shape;
      for (const [name, field] of Object.entries(shape)) {
        const inner = field instanceof z.ZodOptional ? (field.unwrap() as z.ZodType) : field;
        const json = JSON.stringify(z.toJSONSchema(field, { unrepresentable: 'any', io: 'input' }));
        const looksBoolean = typeof field.safeParse('true').data === 'boolean' || /"enum":\["(true|false)","(true|false)"\]/.test(json);
        if (!looksBoolean) continue;
        booleans.push(`${schemaName}.${name}`);
        expect([schemaName, name, isBooleanQueryParam(inner)]).toEqual([schemaName, name, true]);
      }
    }
    expect(booleans).toEqual(['recallQuery.archived']);
  });
});
