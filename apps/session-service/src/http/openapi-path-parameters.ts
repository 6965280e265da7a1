/**
 * The path parameter `sessionId` of every operation, declared in the OpenAPI document with the rule
 * the service applies to it ({@link SESSION_ID_PATTERN}, the same as recall's `sessionId` filter),
 * so a client validating against the document does not send an id the service refuses with 400
 * `invalid_session_id` (newcomer ncpolyglot A3). Nest's swagger module declares route parameters
 * as plain strings.
 */
import type { OpenAPIObject } from '@nestjs/swagger';
import { SESSION_ID_PATTERN, SESSION_ID_RULE } from './request-schemas';

/** The JSON Schema of a session id in a path. */
export const SESSION_ID_PATH_SCHEMA = { type: 'string', pattern: SESSION_ID_PATTERN.source, minLength: 1, maxLength: 128 } as const;

/** `document` with every `sessionId` path parameter given {@link SESSION_ID_PATH_SCHEMA} and the rule; changes it in place and returns it. */
export function withPathParameterRules(document: OpenAPIObject): OpenAPIObject {
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item as Record<string, { parameters?: Array<Record<string, unknown>> }>)) {
      if (operation === null || typeof operation !== 'object' || !Array.isArray(operation.parameters)) continue;
      for (const parameter of operation.parameters) {
        if (parameter.in !== 'path' || parameter.name !== 'sessionId') continue;
        parameter.schema = { ...SESSION_ID_PATH_SCHEMA };
        parameter.description = `the session: ${SESSION_ID_RULE.replace(/^use /, '')} (else 400 invalid_session_id)`;
      }
    }
  }
  return document;
}
