/**
 * JSON Schemas of the request bodies for the OpenAPI document at `/docs`, generated from the same
 * zod schemas that validate requests (so the document cannot drift from the validation). Where
 * the validation defers to the domain (strategy, trigger: `parseStrategy`/`parseTrigger`; OpenAI
 * messages: `openAiMessagesToEvents`), the document points to named schemas of what they accept.
 */
import { applyDecorators } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import { z } from 'zod';
import { MAX_PARAMETER_VALUE, MAX_SHADOW_PROMPT_LENGTH, MAX_SYSTEM_PROMPT_LENGTH, STRATEGY_DEFAULTS } from '@lib/compaction';
import { LENGTH_UNIT } from '@lib/session';
import { clientIdText, integerRangeOf, MAX_TOOL_CALLS_PER_EVENT, NULL_REFUSED_FIELDS, requestSchemas, type RequestSchemas } from './request-schemas';
import { named, schemaRef, STRATEGY_PARAMETER_MEANINGS, TriggerSchema } from './response-schemas';
import { booleanQueryJsonSchema, isBooleanQueryParam } from './boolean-query-param';
import { CLIENT_DATE_TIME_PATTERN } from './client-time-pattern';
import { identityFilterAdvice } from './validate';

const DOC_LIMITS = { maxEventsPerRequest: 1000, maxTextLength: 1_000_000 };
let cache: RequestSchemas | undefined;

const D = STRATEGY_DEFAULTS;
/**
 * An optional count parameter of a strategy: 1 (or `min`) to MAX_PARAMETER_VALUE, described by what
 * it means and counts ({@link STRATEGY_PARAMETER_MEANINGS}) and its default; null counts as absent
 * (the default). The description only: the validation is `parseStrategy`'s.
 */
const count = (name: keyof typeof STRATEGY_PARAMETER_MEANINGS, fallback: number, min = 1) =>
  z
    .number()
    .int()
    .min(min)
    .max(MAX_PARAMETER_VALUE)
    .nullable()
    .optional()
    .describe(`${STRATEGY_PARAMETER_MEANINGS[name]}; default ${fallback}; null counts as absent`);
const prompts = {
  shadowPrompt: z.string().min(1).max(MAX_SHADOW_PROMPT_LENGTH).nullable().optional().describe('the default shadow prompt when absent or null'),
  systemPrompt: z.string().min(1).max(MAX_SYSTEM_PROMPT_LENGTH).nullable().optional().describe('the default summarizer system prompt when absent or null'),
};
/** A strategy as a request names it: `type` plus any parameters (the rest take their defaults, DESIGN §3.4; the same numbers as `parseStrategy`). */
export const StrategyInputSchema = named(
  'StrategyInput',
  z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('sliding-window'), maxEvents: count('maxEvents', D['sliding-window'].maxEvents) }),
    z.strictObject({ type: z.literal('turn-window'), maxTurns: count('maxTurns', D['turn-window'].maxTurns) }),
    z.strictObject({ type: z.literal('token-count'), maxTokens: count('maxTokens', D['token-count'].maxTokens) }),
    z.strictObject({
      type: z.literal('recursive-summarization'),
      maxEventsToKeep: count('maxEventsToKeep', D['recursive-summarization'].maxEventsToKeep),
      overlapSize: count('overlapSize', D['recursive-summarization'].overlapSize, 0).describe(
        `${STRATEGY_PARAMETER_MEANINGS.overlapSize}; default ${D['recursive-summarization'].overlapSize} (at most maxEventsToKeep − 1); null counts as absent`,
      ),
      ...prompts,
    }),
    z.strictObject({
      type: z.literal('rolling-summary'),
      keepTurns: count('keepTurns', D['rolling-summary'].keepTurns),
      summarizeAtTokens: count('summarizeAtTokens', D['rolling-summary'].summarizeAtTokens),
      ...prompts,
    }),
  ]),
  'A compaction strategy: type plus optional parameters (defaults in DESIGN §3.4)',
);

/** Null counts as absent for an optional field of a message (as `openAiMessagesToEvents` reads it). */
const absentOrNull = <T extends z.ZodType>(schema: T) => schema.nullable().optional();

/**
 * The JSON Schema of a field a message (or a part, a tool call, its function) does not keep: only
 * null or an empty list, which count as absent (the SDK's `annotations: []`, `audio: null` on a
 * reply appended as returned); any other value is refused (400 invalid_message naming the field:
 * it would be lost). The document's `additionalProperties` of the OpenAI input shapes; the typed
 * client's types (`libs/client`) show them as closed objects, TypeScript having no type for
 * "every other key null or []" beside typed keys.
 */
export const ABSENT_EXTRA_FIELD_SCHEMA = {
  anyOf: [{ type: 'null' }, { type: 'array', maxItems: 0 }],
  description: 'a field the service does not keep: only null or [] (counted as absent); any other value is refused (400 invalid_message)',
} as const;

/** A `z.strictObject` whose JSON Schema takes {@link ABSENT_EXTRA_FIELD_SCHEMA} for other fields (the fields `openAiMessagesToEvents` ignores). */
const openAiObject = <T extends z.core.$ZodLooseShape>(shape: T) => z.strictObject(shape).meta({ additionalProperties: ABSENT_EXTRA_FIELD_SCHEMA });

/**
 * A text of a message, within the bound the service applies to every text once the message is an
 * event (MAX_TEXT_LENGTH, the native events' `maxLength`: {@link DOC_LIMITS}).
 */
const messageText = () => z.string().max(DOC_LIMITS.maxTextLength);
/** The most text parts one `content` array may hold (an event's `textParts`, `dataParts`). */
const MAX_TEXT_PARTS = 1024;
const textPart = openAiObject({ type: z.literal('text'), text: messageText() }).describe('a text part');
/** Text parts: at most {@link MAX_TEXT_PARTS}, concatenated to the event's text (which MAX_TEXT_LENGTH bounds too). */
const textParts = () =>
  z
    .array(textPart)
    .max(MAX_TEXT_PARTS)
    .describe(`text parts (at most ${MAX_TEXT_PARTS}), concatenated: the text is also at most ${DOC_LIMITS.maxTextLength} ${LENGTH_UNIT} in all`);
/** Content with text: a non-empty string or non-empty text parts (system, developer, user and tool messages). */
const content = z.union([messageText().min(1), textParts().min(1)]);
const common = {
  id: absentOrNull(clientIdText()).describe('the event id (idempotency key); the service assigns one when absent or null'),
  createdAt: absentOrNull(z.iso.datetime({ offset: true }).meta({ pattern: CLIENT_DATE_TIME_PATTERN })).describe(
    "when the message was said (not an OpenAI field): ISO-8601 with Z or an offset, years 0001 to 9999 once in UTC, as an event's createdAt; absent or null: when the store recorded it. format=openai does not render it; the log and the window show it",
  ),
  name: absentOrNull(messageText().min(1)).describe(
    'the participant name, kept and rendered back; "notice" on a system or developer message makes it a notice (DESIGN §3.1)',
  ),
};
/**
 * An OpenAI chat message as `POST …/messages` accepts it (`openAiMessagesToEvents`): any other
 * field only null or an empty list (they count as absent: {@link ABSENT_EXTRA_FIELD_SCHEMA}), its
 * texts bounded as the native events' are.
 */
export const OpenAiInputMessageSchema = named(
  'OpenAiInputMessage',
  z.discriminatedUnion('role', [
    openAiObject({ role: z.literal('system'), content, ...common }),
    openAiObject({ role: z.literal('developer'), content, ...common }),
    openAiObject({ role: z.literal('user'), content, ...common }),
    // function_call (deprecated by OpenAI) is an other field: only null (the service refuses [] too, as deprecated).
    openAiObject({
      role: z.literal('assistant'),
      content: absentOrNull(z.union([messageText(), textParts()])).describe('null, absent or [] (each: no text) when tool_calls or refusal says it all'),
      refusal: absentOrNull(messageText().min(1)),
      tool_calls: absentOrNull(
        z
          .array(
            openAiObject({
              id: clientIdText(),
              type: z.literal('function').optional(),
              function: openAiObject({ name: messageText().min(1), arguments: messageText() }),
            }),
          )
          .max(MAX_TOOL_CALLS_PER_EVENT),
      ),
      ...common,
    }),
    openAiObject({ role: z.literal('tool'), tool_call_id: clientIdText(), content: z.union([messageText(), textParts().min(1)]), ...common }),
  ]),
  'An OpenAI chat message (system, developer, user, assistant with tool_calls, tool with tool_call_id); other fields only null or empty',
);

/** The JSON Schema of one request body, for `@ApiBody({ schema })`. */
export function openApiSchema(name: 'appendEvents' | 'appendMessages' | 'compact' | 'policy'): Record<string, unknown> {
  cache ??= requestSchemas(DOC_LIMITS);
  const json = z.toJSONSchema(cache[name], { unrepresentable: 'any', io: 'input' }) as Record<string, unknown>;
  delete json.$schema;
  const props = json.properties as Record<string, Record<string, unknown>>;
  // An optional field sent null counts as absent (nullOptionalsAsAbsent, every body): the document says so.
  const required = new Set((json.required as string[] | undefined) ?? []);
  const shape = (cache[name] as unknown as { shape: Record<string, z.ZodType> }).shape;
  for (const [key, property] of Object.entries(props)) if (!required.has(key) && !NULL_REFUSED_FIELDS.has(shape[key])) props[key] = orNull(property);
  if (name === 'compact' || name === 'policy') {
    props.strategy =
      name === 'policy'
        ? {
            anyOf: [schemaRef(StrategyInputSchema), { type: 'null' }],
            description:
              'null clears the policy (trigger and estimator then null or left out: either one set is 400 invalid_parameter); a GET …/policy answer can be sent back as it is',
          }
        : {
            anyOf: [schemaRef(StrategyInputSchema), { type: 'null' }],
            description:
              "absent or null: the session's stored policy (PUT …/policy), its strategy, trigger and estimator as in force on the state the pass is decided on (the answer then says from: policy and policyRevision); a session without a policy is 400 invalid_parameter naming strategy, nothing written",
          };
    props.trigger = {
      anyOf: [schemaRef(TriggerSchema), { type: 'null' }],
      description:
        name === 'policy'
          ? 'absent or null: always'
          : "absent or null: always; only with a strategy (without one the policy's trigger is used, and one sent is 400 invalid_parameter)",
    };
    props.estimator = {
      ...props.estimator,
      description:
        name === 'policy'
          ? 'absent or null: cl100k_base'
          : "absent or null: cl100k_base; only with a strategy (without one the policy's estimator is used, and one sent is 400 invalid_parameter)",
    };
  }
  if (name === 'appendEvents') props.events = { ...props.events, items: nativeEventSchema(cache) };
  if (name === 'appendMessages') props.messages = { ...props.messages, items: schemaRef(OpenAiInputMessageSchema) };
  return json;
}

/** `node` (a JSON Schema) or null, its description kept and saying so: an optional field sent null counts as absent. */
function orNull(node: Record<string, unknown>): Record<string, unknown> {
  const { description, ...rest } = node;
  return { anyOf: [rest, { type: 'null' }], description: `${typeof description === 'string' ? `${description}; ` : ''}null counts as absent` };
}

/**
 * The JSON Schema of a native event as `POST …/events` accepts it: every optional field (at any
 * depth: `id`, `createdAt`, `metadata`, `name`, `textParts`, `toolCalls`, `refusal`, `notice`, a
 * response's `dataParts`) may also be null, which counts as absent (`nullOptionalsAsAbsent`,
 * the rule the route applies; an assistant's `text: null` is a value of its own).
 */
function nativeEventSchema(schemas: RequestSchemas): Record<string, unknown> {
  const json = z.toJSONSchema(schemas.nativeEvent, {
    unrepresentable: 'any',
    io: 'input',
    override: (ctx) => {
      const node = ctx.jsonSchema as Record<string, unknown>;
      // The fields nullOptionalsAsAbsent drops when null: optional, and null not a value of their own.
      if (ctx.zodSchema._zod.def.type !== 'optional' || z.safeParse(ctx.zodSchema, null).success || Array.isArray(node.anyOf)) return;
      const rewritten = orNull({ ...node });
      for (const key of Object.keys(node)) delete node[key];
      Object.assign(node, rewritten);
    },
  }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}

/**
 * The JSON Schema of an integer query parameter ({@link integerInRange}): an integer in its range
 * (up to 2^53 − 1, what a JSON number holds exactly) or its decimal text (`pattern`: the range's
 * integers only, `maxLength` their digits), so a typed client passes `limit: 2` or `limit: '2'` (a
 * revision past 2^53 − 1 as text). Both arrive as the same text: the query string has no types.
 * The text's keywords are in the string branch only (beside the `anyOf`, strict validators such as
 * Ajv's default mode refuse a `maxLength` that has no string type).
 */
function integerQueryParameter(json: Record<string, unknown>, range: { minimum: bigint; maximum: bigint }): Record<string, unknown> {
  const { type, pattern, maxLength: _maxLength, ...rest } = json;
  const big = range.maximum > BigInt(Number.MAX_SAFE_INTEGER);
  const maximum = big ? Number.MAX_SAFE_INTEGER : Number(range.maximum);
  return {
    ...rest,
    anyOf: [
      {
        type: 'integer',
        minimum: Number(range.minimum),
        maximum,
        ...(big ? { description: `as a number up to ${maximum} (2^53 − 1); larger ones as text` } : {}),
      },
      {
        type,
        pattern,
        maxLength: range.maximum.toString().length,
        description: `an integer from ${range.minimum} to ${range.maximum} in plain decimal digits${big ? ' (64-bit: send it as text past 2^53 − 1)' : ''}`,
      },
    ],
  };
}

/**
 * The JSON Schema of a zod query schema (a strict object of text parameters) as the OpenAPI
 * document gives it: an integer parameter is an integer or its text ({@link integerQueryParameter}),
 * a boolean one a boolean or its text ({@link booleanQueryJsonSchema}), an identity filter
 * (`identityFilter`) gets `minLength` 1 and says it is refused empty, the others as zod renders them.
 */
export function queryParametersJsonSchema(schema: z.ZodType): { properties?: Record<string, Record<string, unknown>>; required?: string[] } {
  const json = z.toJSONSchema(schema, {
    unrepresentable: 'any',
    io: 'input',
    override: (ctx) => {
      const range = integerRangeOf(ctx.zodSchema);
      const node = ctx.jsonSchema as Record<string, unknown>;
      if (!range && !isBooleanQueryParam(ctx.zodSchema)) return;
      const rewritten = range ? integerQueryParameter(node, range) : booleanQueryJsonSchema(node.description);
      for (const key of Object.keys(node)) delete node[key];
      Object.assign(node, rewritten);
    },
  }) as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
  // An identity filter sent empty is refused, where other optional parameters count as absent (docs/http-api.md "Empty query parameters").
  const shape = (schema as unknown as { shape?: Record<string, unknown> }).shape ?? {};
  for (const [name, property] of Object.entries(json.properties ?? {})) {
    const advice = identityFilterAdvice(shape[name]);
    if (!advice) continue;
    property.minLength = 1;
    const said = typeof property.description === 'string' ? `${property.description}; ` : '';
    property.description = `${said}not empty (${name}= is refused, 400): leave it out to ${advice.without}`;
  }
  return json;
}

/**
 * `@ApiQuery` decorators for every field of a zod query schema (name, required, JSON Schema type,
 * pattern, enum and description, by {@link queryParametersJsonSchema}), so documented and
 * validated query parameters are the same.
 */
export function ApiQueryParams(schema: z.ZodType): MethodDecorator {
  const json = queryParametersJsonSchema(schema);
  const decorators = Object.entries(json.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property;
    return ApiQuery({ name, required: json.required?.includes(name) ?? false, schema: rest, ...(typeof description === 'string' ? { description } : {}) });
  });
  return applyDecorators(...decorators);
}
