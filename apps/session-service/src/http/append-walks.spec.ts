/**
 * How many times validation walks an append body (newcomer: a valid append of 80 events of 6,000
 * metadata keys each cost 10–15× its `JSON.parse`, the metadata walked once per check; a refusal of
 * 1000 events of 128 invalid tool calls 10× its `JSON.parse`, the null-optional pass walking every
 * tool call). Counted with proxies that record every listing of an object's keys and every read of
 * its members, never timed; and checked against the rules as they were written before (one walk
 * per check, every schema field looked up), which must answer the same for any body.
 */
import fc from 'fast-check';
import type { z } from 'zod';
import { codePointLength, inexactJsonNumberAt, INEXACT_JSON_NUMBER_RULE, LENGTH_UNIT } from '@lib/session';
import { knownJsonText, knownStringUnits, withoutSharedValueFreeze } from '@lib/event-store';
import { overLimitMessage } from '@lib/compaction';
import { appendEventsCommandFrom } from '../commands/session-command-requests';
import { refusal } from '../commands/testing/refusal';
import { countingReads } from '../../../../test/support/counting-proxies';
import {
  jsonHasLoneSurrogate,
  jsonLimitExceeded,
  MAX_METADATA_DEPTH,
  MAX_METADATA_LENGTH,
  NULL_REFUSED_FIELDS,
  nullOptionalsAsAbsent,
  requestSchemas,
  scanJsonValue,
} from './request-schemas';

const schemas = requestSchemas({ maxEventsPerRequest: 1000, maxTextLength: 100_000 });

/** Listings of keys (`ownKeys`), reads of members (`get` of an own member) and lookups of members (`getOwnPropertyDescriptor`, `has`) of the objects of a value. */
interface Reads {
  listings: number;
  members: number;
  lookups: number;
}

/** `value` with each of its objects (arrays too) behind a proxy counting into `reads` (a lookup: `getOwnPropertyDescriptor` or `has`). */
const counted = <T>(value: T, reads: Reads): T =>
  countingReads(value, { counts: reads, into: { listing: 'listings', member: 'members', descriptor: 'lookups', has: 'lookups' } });

/** Objects (not arrays) in `value`, at any depth. */
function objectsIn(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const inner = Object.values(value).reduce<number>((n, v) => n + objectsIn(v), 0);
  return Array.isArray(value) ? inner : inner + 1;
}

/** UTF-16 code units of the strings in `value` (keys left out), as the projector adds them up. */
function stringUnitsOf(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (value === null || typeof value !== 'object') return 0;
  return Object.values(value).reduce<number>((n, v) => n + stringUnitsOf(v), 0);
}

/** Metadata of `n` keys whose values are numbers, strings and nested objects. */
const metadataOf = (n: number) =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i % 10 === 0 ? { nested: { deeper: `v${i}`, n: i } } : i % 3 === 0 ? `text ${i}` : i]));

describe('valid metadata is walked once by its checks, then serialized once', () => {
  it('given metadata of 3,000 keys holding nested objects (near its 64 KiB), when the append is validated, then each of its objects is listed at most twice and each member read at most twice, and its JSON and the length of its strings are remembered for the store and the projector', async () => {
    const reads: Reads = { listings: 0, members: 0, lookups: 0 };
    const plain = metadataOf(3000);
    expect(JSON.stringify(plain).length).toBeGreaterThan(40_000);
    const metadata = counted(plain, reads);
    // the freeze of shared values in test runs walks them: production does not
    const command = await withoutSharedValueFreeze(() =>
      appendEventsCommandFrom(schemas, 't', 's', { events: [{ type: 'user', text: 'x', metadata }] }, () => 'gen'),
    );
    const members = JSON.stringify(plain).split(':').length - 1;
    // the checks' one walk (depth, size, numbers) and the serialization its size is measured on: not one walk per check
    expect(reads.listings).toBeLessThanOrEqual(2 * objectsIn(plain));
    expect(reads.members).toBeLessThanOrEqual(2 * members);
    expect(command.events[0].metadata).toBe(metadata);
    expect(knownJsonText(metadata)).toBe(JSON.stringify(plain));
    expect(knownStringUnits(metadata)).toBe(stringUnitsOf(plain));
  });

  it('given metadata refused for a lone surrogate or an inexact number, then it is refused as before, and its JSON is not remembered', () => {
    for (const [value, parameter, message] of [
      [{ a: { b: 'x\ud800' } }, 'events[0].metadata', 'contains a lone UTF-16 surrogate; send valid Unicode'],
      [{ a: [1, 2 ** 60] }, 'events[0].metadata.a[1]', INEXACT_JSON_NUMBER_RULE],
    ] as const) {
      const metadata = { ...value };
      const err = refusal(() => appendEventsCommandFrom(schemas, 't', 's', { events: [{ type: 'user', text: 'x', metadata }] }));
      expect(err.parameter).toBe(parameter);
      expect(err.message).toBe(`${parameter}: ${message}`);
      expect(knownJsonText(metadata)).toBeUndefined();
    }
  });
});

/** The metadata rule as it was written before (each check its own walk), as the one issue it raises: [message, path] or undefined. */
function metadataIssueBefore(m: unknown): [string, Array<string | number>] | undefined {
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return ['must be a JSON object', []];
  const exceeded = jsonLimitExceeded(m, MAX_METADATA_DEPTH, MAX_METADATA_LENGTH);
  if (exceeded === 'depth') return [overLimitMessage('nests deeper than', { max: MAX_METADATA_DEPTH, unit: 'levels', remedy: 'flatten it' }), []];
  const json = exceeded === 'length' ? undefined : JSON.stringify(m);
  if (json === undefined || (json.length > MAX_METADATA_LENGTH && codePointLength(json) > MAX_METADATA_LENGTH))
    return [
      overLimitMessage('is larger than', {
        max: MAX_METADATA_LENGTH,
        unit: `${LENGTH_UNIT} of JSON`,
        remedy: 'keep large data elsewhere and put a reference to it in metadata',
      }),
      [],
    ];
  if (jsonHasLoneSurrogate(m)) return ['contains a lone UTF-16 surrogate; send valid Unicode', []];
  const inexact = inexactJsonNumberAt(m);
  return inexact ? [INEXACT_JSON_NUMBER_RULE, inexact] : undefined;
}

/** Strings with lone surrogates, escapes that look like them, and ordinary text. */
const tricky = fc.oneof(
  fc.string(),
  fc.constantFrom('\ud800', 'a\udc00b', '\\ud800', '\\\\ud83d', '😀', '\ud83d\ude00x', 'x\\', '"\\u0000'),
  fc.string({ unit: 'binary', maxLength: 6 }),
);
/** Numbers as JSON.parse gives them, exact or not. */
const numbers = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.constantFrom(2 ** 53, -(2 ** 53) - 2, 1e300, Infinity, -Infinity, -0, 0.5, Number.MAX_SAFE_INTEGER),
);
const metadataValue = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    tricky,
    numbers,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(tricky, tie('value'), { maxKeys: 4 }),
  ),
})).value;

describe('property: the metadata rule answers as before for any metadata', () => {
  it('the same issue (message and path), or none, and the JSON remembered exactly when accepted', () => {
    let deep: unknown = 1;
    for (let i = 0; i < MAX_METADATA_DEPTH + 2; i++) deep = { a: deep, s: 'x\ud800' };
    const big = Object.fromEntries(Array.from({ length: 9000 }, (_, i) => [`k${i}`, 2 ** 60]));
    fc.assert(
      fc.property(fc.oneof(metadataValue, fc.constantFrom<unknown>(deep, big, { big, s: '\ud800' }, [1], 'x')), (m) => {
        const parsed = schemas.nativeEvent.safeParse({ type: 'user', text: 'x', metadata: m });
        const before = metadataIssueBefore(m);
        if (before === undefined) {
          expect(parsed.success).toBe(true);
          expect(knownJsonText(m)).toBe(JSON.stringify(m));
          expect(knownStringUnits(m)).toBe(stringUnitsOf(m));
        } else {
          expect(parsed.success).toBe(false);
          const issue = parsed.error!.issues[0];
          expect([issue.message, issue.path]).toEqual([before[0], ['metadata', ...before[1]]]);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('scanJsonValue: the limit jsonLimitExceeded finds, and whether a number cannot be kept as sent', () => {
    fc.assert(
      fc.property(metadataValue, fc.nat(200), fc.integer({ min: 1, max: 6 }), (value, maxLength, maxDepth) => {
        const scan = scanJsonValue(value, maxDepth, maxLength);
        expect(scan.exceeded).toBe(jsonLimitExceeded(value, maxDepth, maxLength));
        if (scan.exceeded === undefined) {
          expect(scan.inexactNumber).toBe(inexactJsonNumberAt(value) !== undefined);
          expect(scan.stringUnits).toBe(stringUnitsOf(value));
        }
        if (scan.inexactNumber) expect(inexactJsonNumberAt(value)).toBeDefined();
      }),
      { numRuns: 1000 },
    );
  });
});

/** The null-optional pass as it was written before: every field of every object schema looked up, every array walked. */
function nullOptionalsAsAbsentBefore(schema: z.ZodType, value: unknown): unknown {
  const def = (schema as unknown as { def: { type: string } & Record<string, unknown> }).def;
  switch (def.type) {
    case 'optional':
    case 'nullable':
      return nullOptionalsAsAbsentBefore(def.innerType as z.ZodType, value);
    case 'array': {
      if (!Array.isArray(value)) return value;
      const items = value.map((item) => nullOptionalsAsAbsentBefore(def.element as z.ZodType, item));
      return items.some((item, i) => item !== value[i]) ? items : value;
    }
    case 'union': {
      if (value === null || typeof value !== 'object' || typeof def.discriminator !== 'string') return value;
      const discriminator = def.discriminator;
      const tag = (value as Record<string, unknown>)[discriminator];
      const option = (def.options as z.ZodType[]).find(
        (o) => (o as unknown as { shape?: Record<string, z.ZodType> }).shape?.[discriminator]?.safeParse(tag).success,
      );
      return option ? nullOptionalsAsAbsentBefore(option, value) : value;
    }
    case 'object': {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
      const shape = def.shape as Record<string, z.ZodType>;
      const sent = value as Record<string, unknown>;
      const changed = new Map<string, { next: unknown } | 'dropped'>();
      for (const key of Object.keys(shape)) {
        if (!Object.hasOwn(sent, key)) continue;
        const field = shape[key];
        const child = sent[key];
        if (child === null && !NULL_REFUSED_FIELDS.has(field) && field.safeParse(undefined).success && !field.safeParse(null).success) {
          changed.set(key, 'dropped');
          continue;
        }
        const next = nullOptionalsAsAbsentBefore(field, child);
        if (next !== child) changed.set(key, { next });
      }
      if (changed.size === 0) return value;
      const entries: Array<[string, unknown]> = [];
      for (const key of Object.keys(sent)) {
        const change = changed.get(key);
        if (change === undefined) entries.push([key, sent[key]]);
        else if (change !== 'dropped') entries.push([key, change.next]);
      }
      return Object.fromEntries(entries);
    }
    default:
      return value;
  }
}

/** An object of some of `fields`, each absent, null or one of its values, in a random order, with an unknown key now and then. */
function objectOf(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Record<string, unknown>> {
  const entries = Object.entries(fields).map(([key, value]) =>
    fc.oneof(
      fc.constant(undefined),
      fc.constant([key, null] as const),
      value.map((v) => [key, v] as const),
    ),
  );
  return fc
    .tuple(fc.tuple(...entries), fc.option(fc.constant(['junk', null] as const), { nil: undefined }))
    .chain(([present, junk]) =>
      fc.shuffledSubarray(
        [...present, junk].filter((e) => e !== undefined),
        { minLength: 0 },
      ),
    )
    .map((pairs) => Object.fromEntries(pairs));
}

const text = fc.constantFrom('x', '', 'hello');
const parts = fc.array(fc.oneof(text, fc.constant(null), fc.constant({})), { maxLength: 3 });
const toolCall = fc.oneof(fc.constant({}), fc.constant(null), objectOf({ id: text, name: text, arguments: text }));
const response = fc.oneof(fc.constant({}), objectOf({ toolCallId: text, name: text, data: text, dataParts: parts }));
const common = { id: text, createdAt: fc.constant('2026-01-31T12:00:00Z'), metadata: fc.constant({ a: 1 }), name: text, textParts: parts };
const event = fc.oneof(
  objectOf({ type: fc.constant('user'), text, ...common }),
  objectOf({ type: fc.constant('system'), text, notice: fc.boolean(), ...common }),
  objectOf({ type: fc.constant('assistant'), text, toolCalls: fc.array(toolCall, { maxLength: 3 }), refusal: text, ...common }),
  objectOf({ type: fc.constant('tool'), responses: fc.array(response, { maxLength: 3 }), ...common }),
  objectOf({ type: fc.constant('summary'), shadowPrompt: text, text, ...common }),
  objectOf({ type: fc.constantFrom('other', 7), text }),
  fc.constantFrom(null, 'x', [1]),
);
const appendBody = fc.oneof(
  objectOf({ events: fc.array(event, { maxLength: 4 }), expectedRevision: fc.constantFrom('any', 3), userId: text }),
  fc.constantFrom(null, [], 'x'),
);
const otherBodies: Array<[string, z.ZodType, fc.Arbitrary<unknown>]> = [
  [
    'compact',
    schemas.compact,
    objectOf({ strategy: fc.constant({ type: 'sliding-window' }), trigger: fc.constant({ type: 'turn-count' }), estimator: text, dryRun: fc.boolean() }),
  ],
  ['policy', schemas.policy, objectOf({ strategy: fc.constant({}), trigger: fc.constant({}), sessionId: text, setAt: text, expectedRevision: text })],
  ['messages', schemas.appendMessages, objectOf({ messages: fc.array(fc.constantFrom(null, { role: 'user', name: null }), { maxLength: 2 }), userId: text })],
];

describe('property: the null-optional pass gives what it gave before for any body', () => {
  const same = (schema: z.ZodType, body: unknown) => {
    const after = nullOptionalsAsAbsent(schema, body);
    const before = nullOptionalsAsAbsentBefore(schema, body);
    expect(after === body).toBe(before === body);
    expect(after).toEqual(before);
    // keys in the same order, at every level
    expect(JSON.stringify(after)).toBe(JSON.stringify(before));
  };
  it('append bodies: nulls dropped where they were, the rest kept in its order, the body itself when nothing is dropped', () => {
    fc.assert(
      fc.property(appendBody, (body) => same(schemas.appendEvents, body)),
      { numRuns: 2000 },
    );
  });
  it.each(otherBodies)('%s bodies', (_name, schema, body) => {
    fc.assert(
      fc.property(body, (b) => same(schema, b)),
      { numRuns: 500 },
    );
  });
});

describe('the null-optional pass reads only where the schema has a field null may be dropped from', () => {
  const many = <T>(n: number, item: () => T) => Array.from({ length: n }, item);

  it('given 1000 events of 128 invalid tool calls, when the append is refused, then no tool call but the first is read', () => {
    const reads: Reads = { listings: 0, members: 0, lookups: 0 };
    const calls = many(1000, () => many(128, () => counted({}, reads)));
    const body = { events: calls.map((toolCalls) => ({ type: 'assistant', text: 'x', toolCalls })) };
    const err = refusal(() => appendEventsCommandFrom(schemas, 't', 's', body));
    expect(err.message).toBe('events[0].toolCalls[0].id: is required');
    // the first call is read by validation (its fields, its unknown keys); none of the other 127,999
    expect(reads.listings).toBeLessThanOrEqual(4);
    expect(reads.members + reads.lookups).toBeLessThanOrEqual(40);
  });

  it('given 1000 events of 128 invalid tool responses, when the append is refused, then each response is read once (its dataParts looked up), the first a few times more', () => {
    const reads: Reads = { listings: 0, members: 0, lookups: 0 };
    const responses = many(1000, () => many(128, () => counted({}, reads)));
    const body = { events: responses.map((r) => ({ type: 'tool', responses: r })) };
    const err = refusal(() => appendEventsCommandFrom(schemas, 't', 's', body));
    expect(err.message).toBe('events[0].responses[0].toolCallId: is required');
    expect(reads.listings).toBeLessThanOrEqual(4);
    expect(reads.members).toBeLessThanOrEqual(40);
    expect(reads.lookups).toBeLessThanOrEqual(128_000 + 40);
  });

  it('given a null dataParts in a late response, then it is still dropped (read, not skipped)', () => {
    const body = {
      events: [
        {
          type: 'tool',
          responses: [...many(127, () => ({ toolCallId: 'c', name: 'f', data: 'd' })), { toolCallId: 'c', name: 'f', data: 'd', dataParts: null }],
        },
      ],
    };
    const read = nullOptionalsAsAbsent(schemas.appendEvents, body) as typeof body;
    expect(read).not.toBe(body);
    expect(read.events[0].responses[127]).toEqual({ toolCallId: 'c', name: 'f', data: 'd' });
    expect(read.events[0].responses[0]).toBe(body.events[0].responses[0]);
  });
});
