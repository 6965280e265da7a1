/**
 * The one rule of every boolean query parameter (recall's `archived`): `true` or `false` in any
 * letter case (`True` is what Python's requests sends for True, `TRUE` what some shells and
 * spreadsheets write), or `1` or `0`. Anything else is refused (400 `validation_failed`) with
 * {@link BOOLEAN_QUERY_RULE}, which lists what is accepted.
 */
import { z } from 'zod';

/** What a boolean query parameter accepts, as its 400 message says it. */
export const BOOLEAN_QUERY_RULE = 'must be true or false (any letter case, e.g. True) or 1 or 0';

/** {@link BOOLEAN_QUERY_RULE} as a regular expression (ECMA-262, no flags: JSON Schema's `pattern`). */
export const BOOLEAN_QUERY_PATTERN = '^(?:[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]|1|0)$';

/**
 * The boolean a query parameter's text says under {@link BOOLEAN_QUERY_RULE}: `true`/`1` → true,
 * `false`/`0` → false (letter case ignored); undefined for any other text (`yes`, ` true`, `01`, ``).
 */
export function parseBooleanQuery(text: string): boolean | undefined {
  const word = text.toLowerCase();
  if (word === 'true' || text === '1') return true;
  if (word === 'false' || text === '0') return false;
  return undefined;
}

/** The zod definitions of {@link booleanQueryParam} schemas (shared by the copies `.describe()` makes). */
const BOOLEAN_PARAMS = new WeakSet<object>();

/**
 * A boolean query parameter: its text read by {@link parseBooleanQuery}, parsed to a boolean; other
 * text (or a repeated parameter) refused with {@link BOOLEAN_QUERY_RULE}. The OpenAPI document
 * shows it as a boolean or its text ({@link isBooleanQueryParam}).
 */
export function booleanQueryParam() {
  const schema = z
    .string({ error: BOOLEAN_QUERY_RULE })
    .refine((s) => parseBooleanQuery(s) !== undefined, { message: BOOLEAN_QUERY_RULE })
    .transform((s) => parseBooleanQuery(s) === true);
  BOOLEAN_PARAMS.add(schema._zod.def);
  return schema;
}

/** True for a {@link booleanQueryParam} schema (or a copy of it `.describe()` made). */
export function isBooleanQueryParam(schema: z.core.$ZodType): boolean {
  return BOOLEAN_PARAMS.has(schema._zod.def);
}

/**
 * The JSON Schema of a boolean query parameter: a boolean or its text by {@link BOOLEAN_QUERY_PATTERN},
 * so a typed client passes `archived: true` or `archived: 'True'`; both arrive as text. The
 * parameter's description is kept.
 */
export function booleanQueryJsonSchema(description: unknown): Record<string, unknown> {
  return {
    ...(typeof description === 'string' ? { description } : {}),
    anyOf: [
      { type: 'boolean' },
      { type: 'string', pattern: BOOLEAN_QUERY_PATTERN, description: 'true or false in any letter case (true, True, TRUE, …), or 1 or 0' },
    ],
  };
}
