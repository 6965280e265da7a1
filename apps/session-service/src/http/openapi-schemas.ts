/**
 * JSON Schemas of the request bodies for the OpenAPI document at `/docs`, generated from the same
 * zod schemas that validate requests (so the document cannot drift from the validation).
 */
import { z } from 'zod';
import { requestSchemas, type RequestSchemas } from './request-schemas';

const DOC_LIMITS = { maxEventsPerRequest: 1000, maxTextLength: 1_000_000 };
let cache: RequestSchemas | undefined;

/** The JSON Schema of one request body, for `@ApiBody({ schema })`. */
export function openApiSchema(name: 'appendEvents' | 'appendMessages' | 'compact' | 'policy'): Record<string, unknown> {
  cache ??= requestSchemas(DOC_LIMITS);
  const json = z.toJSONSchema(cache[name], { unrepresentable: 'any', io: 'input' }) as Record<string, unknown>;
  delete json.$schema;
  if (name === 'compact' || name === 'policy') {
    const props = json.properties as Record<string, Record<string, unknown>>;
    props.strategy = {
      type: 'object',
      description:
        'sliding-window {maxEvents}, turn-window {maxTurns}, token-count {maxTokens}, recursive-summarization {maxEventsToKeep, overlapSize, shadowPrompt, systemPrompt}, rolling-summary {keepTurns, summarizeAtTokens, shadowPrompt, systemPrompt}',
      example: { type: 'token-count', maxTokens: 4000 },
    };
    props.trigger = {
      type: 'object',
      description: 'turn-count {maxTurns}, token-count {threshold}, any-of {triggers}, all-of {triggers}; absent = always',
      example: { type: 'token-count', threshold: 8000 },
    };
  }
  return json;
}
