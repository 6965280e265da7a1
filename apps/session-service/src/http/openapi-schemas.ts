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
import { integerRangeOf, requestSchemas, type RequestSchemas } from './request-schemas';
import { named, schemaRef, TriggerSchema } from './response-schemas';

const DOC_LIMITS = { maxEventsPerRequest: 1000, maxTextLength: 1_000_000 };
let cache: RequestSchemas | undefined;

const D = STRATEGY_DEFAULTS;
/** An optional count parameter of a strategy: 1 (or `min`) to MAX_PARAMETER_VALUE, its default said; null counts as absent (the default). */
const count = (fallback: number, min = 1) =>
  z.number().int().min(min).max(MAX_PARAMETER_VALUE).nullable().optional().describe(`default ${fallback}; null counts as absent`);
const prompts = {
  shadowPrompt: z.string().min(1).max(MAX_SHADOW_PROMPT_LENGTH).nullable().optional().describe('the default shadow prompt when absent or null'),
  systemPrompt: z.string().min(1).max(MAX_SYSTEM_PROMPT_LENGTH).nullable().optional().describe('the default summarizer system prompt when absent or null'),
};
/** A strategy as a request names it: `type` plus any parameters (the rest take their defaults, DESIGN §3.4; the same numbers as `parseStrategy`). */
export const StrategyInputSchema = named(
  'StrategyInput',
  z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('sliding-window'), maxEvents: count(D['sliding-window'].maxEvents) }),
    z.strictObject({ type: z.literal('turn-window'), maxTurns: count(D['turn-window'].maxTurns) }),
    z.strictObject({ type: z.literal('token-count'), maxTokens: count(D['token-count'].maxTokens) }),
    z.strictObject({
      type: z.literal('recursive-summarization'),
      maxEventsToKeep: count(D['recursive-summarization'].maxEventsToKeep),
      overlapSize: count(D['recursive-summarization'].overlapSize, 0).describe(
        `default ${D['recursive-summarization'].overlapSize} (at most maxEventsToKeep − 1); null counts as absent`,
      ),
      ...prompts,
    }),
    z.strictObject({
      type: z.literal('rolling-summary'),
      keepTurns: count(D['rolling-summary'].keepTurns),
      summarizeAtTokens: count(D['rolling-summary'].summarizeAtTokens),
      ...prompts,
    }),
  ]),
  'A compaction strategy: type plus optional parameters (defaults in DESIGN §3.4)',
);

const content = z.union([z.string(), z.array(z.looseObject({ type: z.literal('text'), text: z.string() })), z.null()]);
/** An OpenAI chat message as `POST …/messages` accepts it (`id` optional: the service assigns one). */
export const OpenAiInputMessageSchema = named(
  'OpenAiInputMessage',
  z.discriminatedUnion('role', [
    z.looseObject({ role: z.literal('system'), content, id: z.string().optional() }),
    z.looseObject({ role: z.literal('developer'), content, id: z.string().optional() }),
    z.looseObject({ role: z.literal('user'), content, id: z.string().optional() }),
    z.looseObject({
      role: z.literal('assistant'),
      content: content.optional(),
      refusal: z.string().nullable().optional(),
      tool_calls: z
        .array(z.looseObject({ id: z.string(), type: z.literal('function'), function: z.looseObject({ name: z.string(), arguments: z.string() }) }))
        .optional(),
      id: z.string().optional(),
    }),
    z.looseObject({ role: z.literal('tool'), tool_call_id: z.string(), content, id: z.string().optional() }),
  ]),
  'An OpenAI chat message (system, developer, user, assistant with tool_calls, tool with tool_call_id)',
);

/** The JSON Schema of one request body, for `@ApiBody({ schema })`. */
export function openApiSchema(name: 'appendEvents' | 'appendMessages' | 'compact' | 'policy'): Record<string, unknown> {
  cache ??= requestSchemas(DOC_LIMITS);
  const json = z.toJSONSchema(cache[name], { unrepresentable: 'any', io: 'input' }) as Record<string, unknown>;
  delete json.$schema;
  const props = json.properties as Record<string, Record<string, unknown>>;
  if (name === 'compact' || name === 'policy') {
    // An optional field sent null counts as absent (nullOptionalsAsAbsent): the document says so.
    const required = new Set((json.required as string[] | undefined) ?? []);
    for (const [key, property] of Object.entries(props)) {
      if (required.has(key)) continue;
      const { description, ...rest } = property;
      props[key] = { anyOf: [rest, { type: 'null' }], description: `${typeof description === 'string' ? `${description}; ` : ''}null counts as absent` };
    }
    props.strategy =
      name === 'policy'
        ? {
            anyOf: [schemaRef(StrategyInputSchema), { type: 'null' }],
            description:
              'null clears the policy (trigger and estimator then null or left out: either one set is 400 invalid_parameter); a GET …/policy answer can be sent back as it is',
          }
        : schemaRef(StrategyInputSchema);
    props.trigger = { anyOf: [schemaRef(TriggerSchema), { type: 'null' }], description: 'absent or null: always' };
    props.estimator = { ...props.estimator, description: 'absent or null: cl100k_base' };
  }
  if (name === 'appendMessages') props.messages = { ...props.messages, items: schemaRef(OpenAiInputMessageSchema) };
  return json;
}

/**
 * The JSON Schema of an integer query parameter ({@link integerInRange}): an integer in its range
 * (up to 2^53 − 1, what a JSON number holds exactly) or its decimal text (`pattern`), so a typed
 * client passes `limit: 2` or `limit: '2'` (a revision past 2^53 − 1 as text). Both arrive as the
 * same text: the query string has no types.
 */
function integerQueryParameter(json: Record<string, unknown>, range: { minimum: bigint; maximum: bigint }): Record<string, unknown> {
  const { type, pattern, ...rest } = json;
  const maximum = range.maximum > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(range.maximum);
  return {
    ...rest,
    anyOf: [
      { type: 'integer', minimum: Number(range.minimum), maximum },
      { type, pattern },
    ],
  };
}

/** True for the JSON Schema of a boolean query parameter: the text `true` or `false` (e.g. recall's `archived`). */
function isBooleanText(json: Record<string, unknown>): boolean {
  const values = json.enum;
  return json.type === 'string' && Array.isArray(values) && values.length === 2 && values.includes('true') && values.includes('false');
}

/**
 * The JSON Schema of a boolean query parameter: a boolean or its text, so a typed client passes
 * `archived: true` or `archived: 'true'`; both arrive as the same text.
 */
function booleanQueryParameter(json: Record<string, unknown>): Record<string, unknown> {
  const { type, enum: values, ...rest } = json;
  return { ...rest, anyOf: [{ type: 'boolean' }, { type, enum: values }] };
}

/**
 * `@ApiQuery` decorators for every field of a zod query schema (name, required, JSON Schema type,
 * pattern, enum and description), so documented and validated query parameters are the same. An
 * integer parameter is an integer or its text ({@link integerQueryParameter}), a boolean one a
 * boolean or its text ({@link booleanQueryParameter}).
 */
export function ApiQueryParams(schema: z.ZodType): MethodDecorator {
  const json = z.toJSONSchema(schema, {
    unrepresentable: 'any',
    io: 'input',
    override: (ctx) => {
      const range = integerRangeOf(ctx.zodSchema);
      const node = ctx.jsonSchema as Record<string, unknown>;
      if (!range && !isBooleanText(node)) return;
      const rewritten = range ? integerQueryParameter(node, range) : booleanQueryParameter(node);
      for (const key of Object.keys(node)) delete node[key];
      Object.assign(node, rewritten);
    },
  }) as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
  const decorators = Object.entries(json.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property;
    return ApiQuery({ name, required: json.required?.includes(name) ?? false, schema: rest, ...(typeof description === 'string' ? { description } : {}) });
  });
  return applyDecorators(...decorators);
}
