/**
 * Forged paging cursors for properties (decoder specs and the HTTP e2e of every paging route): the
 * fields of a real cursor with some set to arbitrary JSON values (numbers, decimal text up to far
 * past 2^63, negatives, floats, strings, nulls, arrays, objects) or left out, encoded as every
 * cursor is (base64url JSON).
 */
import fc from 'fast-check';

/** `fields` as a cursor's text: base64url of their JSON. */
export function cursorText(fields: Readonly<Record<string, unknown>>): string {
  return Buffer.from(JSON.stringify(fields), 'utf8').toString('base64url');
}

/** The fields of a cursor's text (base64url JSON of an object). */
export function cursorJson(text: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** Decimal texts at the edges the decoders guard: 2^49 (recall row ids), 2^53 (safe integers), 2^63 (SQLite integers). */
const EDGE_TEXTS = [
  '0',
  '1',
  '-1',
  '562949953421311',
  '562949953421312',
  '9007199254740991',
  '9007199254740992',
  '9223372036854775807',
  '9223372036854775808',
  '18446744073709551616',
  '99999999999999999999999999999999',
  '01',
  '1.5',
  '1e3',
  ' 1',
  '',
];

/** A number a forger may write: integers of every size, 2^53 and around, floats, -0. */
const forgedNumber: fc.Arbitrary<number> = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.constantFrom(2 ** 49, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), 2 ** 63, 1e308, -0, 0.5, -1),
);

/** Decimal text a forger may write: a small integer (a position a store may hold), any from −2^70 to 2^70, the edges, or a number's text. */
const forgedDecimal: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.bigInt({ min: -2n, max: 5000n }).map(String) },
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
  fc.bigInt({ min: 0n, max: 2n ** 64n }).map(String),
  fc.constantFrom(...EDGE_TEXTS),
  forgedNumber.map(String),
);

/** Any JSON value a forger may put in a cursor's field (see the file's comment). */
export const forgedValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: forgedDecimal },
  { weight: 3, arbitrary: forgedNumber },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 2, arbitrary: fc.array(fc.oneof(forgedNumber, fc.nat(10)), { maxLength: 8 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 3 }), forgedNumber, { maxKeys: 3 }) },
);

/**
 * The fields of `real` (a cursor the service made) with one to three of `keys` (default: `real`'s
 * own) each set to a {@link forgedValue} or left out: the others stay valid, so a forged field is
 * often the only fault (and a forged cursor often a well-formed one that reaches the store).
 */
export function forgedFields(real: Readonly<Record<string, unknown>>, keys: readonly string[] = Object.keys(real)): fc.Arbitrary<Record<string, unknown>> {
  const change = fc.oneof(
    { weight: 4, arbitrary: forgedValue.map((value) => ({ drop: false, value })) },
    { weight: 1, arbitrary: fc.constant({ drop: true, value: undefined }) },
  );
  return fc.dictionary(fc.constantFrom(...keys), change, { minKeys: 1, maxKeys: Math.min(3, keys.length) }).map((changes) => {
    const fields: Record<string, unknown> = { ...real };
    for (const [key, { drop, value }] of Object.entries(changes)) {
      if (drop) delete fields[key];
      else fields[key] = value;
    }
    return fields;
  });
}
