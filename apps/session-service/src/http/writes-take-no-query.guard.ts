/**
 * Write routes take no query parameter: a request with any method but GET and HEAD that carries
 * one is refused with 400 `validation_failed` before anything is read or written
 * (`POST …/compactions?dryRun=true` compacted for real when the parameter was ignored). A
 * parameter that is a field of the route's JSON body ({@link BodyFields}) is told where it
 * belongs: `dryRun: a field of the JSON body, not a query parameter: send it in the body, e.g.
 * {"dryRun": true}`; one the route names as a field of other requests ({@link ForeignBodyFields}) gets
 * its advice (`PUT …/policy?dryRun=true`: a policy has no dry run); a near miss of a body field
 * (`?dryrun=true`) is asked whether it meant that field, in the body; any other is unknown (`foo: unknown
 * query parameter "foo": remove it`).
 * Applied with the API-key guard to the controller of the write routes, after it (a request
 * without a key is still 401 first). The same guard refuses an HTTP precondition header
 * (`If-Match`, `If-None-Match`, `If-Unmodified-Since`, `If-Modified-Since`) on a write, before the
 * query check ({@link preconditionHeaderRefusal}): the service's precondition is `expectedRevision`.
 */
import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { z } from 'zod';
import { nearMissOf } from '@lib/compaction';
import { InvalidRequestError } from '@lib/session';
import { validateQuery } from './validate';

/** No query parameter at all. */
const NO_QUERY = z.strictObject({});

/**
 * Route decorator: the zod object schema of the route's JSON body, so that a query parameter
 * named like one of its fields is answered with where it belongs (the body) instead of "remove it".
 */
export const BodyFields = Reflector.createDecorator<z.ZodObject>();

/**
 * Route decorator: fields of other requests that the route's body does not take, each with the
 * advice for one sent (e.g. `POLICY_FOREIGN_FIELDS` on `PUT …/policy`: a policy has no dry run), so
 * that the same name sent as a query parameter gets that advice, as in the body, not "remove it".
 */
export const ForeignBodyFields = Reflector.createDecorator<Readonly<Record<string, string>>>();

/** True when `value` is an object without own enumerable keys (how the router gives a request without query). */
function isEmptyObject(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  for (const key in value) if (Object.hasOwn(value, key)) return false;
  return true;
}

/** Longest example body (characters) a refusal shows; a longer one is left out. */
const MAX_EXAMPLE_LENGTH = 64;

/**
 * `field`'s schema with its `optional`/`nullable`/`default` wrappers removed: what a present value must be.
 */
function unwrapped(field: z.ZodType): z.ZodType {
  let schema = field;
  while (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable || schema instanceof z.ZodDefault) {
    schema = schema.unwrap() as z.ZodType;
  }
  return schema;
}

/**
 * A JSON body carrying `name` as the query parameter gave it (`value`: the router's string, or an
 * array for a repeated parameter), e.g. `{"dryRun": true}` for `?dryRun=true`: the value read as
 * JSON when that parses (`true`, `5`), else as the string, when `field` accepts it; `true` for a
 * boolean field given something else (`?dryRun=1`). Undefined when no such example is sure to be
 * right: a field of any shape (e.g. `strategy`, an object), a value the field refuses, an example
 * over {@link MAX_EXAMPLE_LENGTH} characters.
 */
function exampleBody(name: string, field: z.ZodType, value: unknown): string | undefined {
  const schema = unwrapped(field);
  if (schema instanceof z.ZodUnknown || schema instanceof z.ZodAny) return undefined;
  const candidates: unknown[] = [];
  if (typeof value === 'string') {
    try {
      candidates.push(JSON.parse(value));
    } catch {
      // not JSON: the string itself
    }
    candidates.push(value);
  }
  if (schema instanceof z.ZodBoolean) candidates.push(true);
  const accepted = candidates.find((candidate) => schema.safeParse(candidate).success);
  if (accepted === undefined) return undefined;
  const example = `{${JSON.stringify(name)}: ${JSON.stringify(accepted)}}`;
  return example.length <= MAX_EXAMPLE_LENGTH ? example : undefined;
}

/** The HTTP precondition headers (RFC 9110 §13.1) a write is refused with: the service sends no ETag and does not evaluate them. */
export const PRECONDITION_HEADERS = ['If-Match', 'If-None-Match', 'If-Unmodified-Since', 'If-Modified-Since'] as const;

/**
 * The 400 `validation_failed` (`parameter` the header's name) for a write carrying the precondition
 * header `name`: HTTP preconditions are not evaluated (no ETag), and a write performed regardless
 * would give a client that relies on one no protection and no error. `takesRevision`: the route's
 * body has `expectedRevision` (the service's precondition), which the message then offers;
 * otherwise the route takes no precondition.
 */
export function preconditionHeaderRefusal(name: string, takesRevision: boolean): InvalidRequestError {
  const instead = takesRevision
    ? 'for a write made only at the revision you read, send expectedRevision in the JSON body, e.g. {"expectedRevision": "8"} (a session\'s revision, as answered; 409 wrong_expected_revision otherwise)'
    : 'this route takes no precondition: leave the header out';
  return new InvalidRequestError(name, `${name}: HTTP preconditions are not supported (no ETag is sent): ${instead}`, 'validation_failed');
}

/** Refuses query parameters and HTTP precondition headers ({@link PRECONDITION_HEADERS}) on write requests; see the module doc. */
@Injectable()
export class WritesTakeNoQueryGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  /**
   * @throws InvalidRequestError (400 `validation_failed`, `parameter` the first query parameter) on a write
   *   request with a query parameter: one named like a field of the route's {@link BodyFields} is told to go
   *   in the JSON body (with an example body when one is sure to be right), any other is unknown.
   */
  canActivate(context: ExecutionContext): boolean {
    const { method, query, headers } = context.switchToHttp().getRequest<{ method: string; query: unknown; headers?: Record<string, unknown> }>();
    if (method === 'GET' || method === 'HEAD') return true;
    const body = this.reflector.get(BodyFields, context.getHandler());
    const precondition = PRECONDITION_HEADERS.find((name) => headers?.[name.toLowerCase()] !== undefined);
    if (precondition) throw preconditionHeaderRefusal(precondition, body !== undefined && Object.hasOwn(body.shape, 'expectedRevision'));
    // Most writes carry no query: nothing to validate (the schema would accept the empty object).
    if (isEmptyObject(query)) return true;
    const [name, value] = Object.entries(query as Record<string, unknown>)[0] ?? [];
    const field = name !== undefined && body && Object.hasOwn(body.shape, name) ? (body.shape[name] as z.ZodType) : undefined;
    if (name !== undefined && field) {
      const example = exampleBody(name, field, value);
      throw new InvalidRequestError(
        name,
        `${name}: a field of the JSON body, not a query parameter: send it in the body${example ? `, e.g. ${example}` : ' (see /docs for its shape)'}`,
        'validation_failed',
      );
    }
    // A near miss of a body field (`?dryrun=true`): told the field's name and where it goes, not "remove it" (a
    // client that removed it would write what it meant to try).
    const near = name !== undefined && body ? nearMissOf(name, Object.keys(body.shape)) : undefined;
    if (name !== undefined && body && near !== undefined) {
      const example = exampleBody(near, body.shape[near] as z.ZodType, value);
      throw new InvalidRequestError(
        name,
        `${name}: unknown query parameter: did you mean the JSON body's field "${near}"? Send it in the body${example ? `, e.g. ${example}` : ' (see /docs for its shape)'}`,
        'validation_failed',
      );
    }
    const foreign = name !== undefined ? this.reflector.get(ForeignBodyFields, context.getHandler()) : undefined;
    if (name !== undefined && foreign && Object.hasOwn(foreign, name)) throw new InvalidRequestError(name, `${name}: ${foreign[name]}`, 'validation_failed');
    validateQuery(NO_QUERY, query);
    return true;
  }
}
