/**
 * The path parameters of the OpenAPI document, declared with the rules the service applies to
 * them (Nest's swagger module declares route parameters as plain strings): `sessionId` of every
 * operation with {@link SESSION_ID_PATTERN} (the same as recall's `sessionId` filter), so a client
 * validating against the document does not send an id the service refuses with 400
 * `invalid_session_id` (newcomer ncpolyglot A3); `compactionId` as the UUID every compaction id is.
 */
import type { OpenAPIObject } from '@nestjs/swagger';
import { COMPACTION_ID_PATTERN, SESSION_ID_PATTERN, SESSION_ID_RULE } from './request-schemas';

/** The JSON Schema of a session id in a path. */
export const SESSION_ID_PATH_SCHEMA = { type: 'string', pattern: SESSION_ID_PATTERN.source, minLength: 1, maxLength: 128 } as const;

/**
 * The JSON Schema of a compaction id in a path: a UUID, as the service derives every compaction id
 * (`compactionIdFor`), in any letter case ({@link COMPACTION_ID_PATTERN}, as recall's `compactionId`
 * filter): UUIDs are case-insensitive on input (RFC 9562 §4), and the routes look the id up in
 * lower case, as it is stored and answered (`compactionIdAsStored`). Any other text is 404 compaction_not_found.
 */
export const COMPACTION_ID_PATH_SCHEMA = {
  type: 'string',
  pattern: COMPACTION_ID_PATTERN.source,
  minLength: 36,
  maxLength: 36,
} as const;

/** The description of a path parameter, by name, when the document gives it a rule. */
const PATH_PARAMETERS: Record<string, { schema: Record<string, unknown>; description: string }> = {
  sessionId: { schema: SESSION_ID_PATH_SCHEMA, description: `the session: ${SESSION_ID_RULE.replace(/^use /, '')} (else 400 invalid_session_id)` },
  compactionId: {
    schema: COMPACTION_ID_PATH_SCHEMA,
    description:
      'the compaction: its id, a UUID, as a compaction answer, the compaction history or a recall hit gives it (lower case), in any letter case (UUIDs are case-insensitive; any other text: 404 compaction_not_found)',
  },
};

/** `document` with every `sessionId` and `compactionId` path parameter given its schema and rule ({@link PATH_PARAMETERS}); changes it in place and returns it. */
export function withPathParameterRules(document: OpenAPIObject): OpenAPIObject {
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item as Record<string, { parameters?: Array<Record<string, unknown>> }>)) {
      if (operation === null || typeof operation !== 'object' || !Array.isArray(operation.parameters)) continue;
      for (const parameter of operation.parameters) {
        const rule =
          parameter.in === 'path' && typeof parameter.name === 'string' && Object.hasOwn(PATH_PARAMETERS, parameter.name)
            ? PATH_PARAMETERS[parameter.name]
            : undefined;
        if (!rule) continue;
        parameter.schema = { ...rule.schema };
        parameter.description = rule.description;
      }
    }
  }
  return document;
}
