/**
 * Write routes take no query parameter: a request with any method but GET and HEAD that carries
 * one is refused with 400 `validation_failed` before anything is read or written
 * (`POST …/compactions?dryRun=true` compacted for real when the parameter was ignored). A
 * parameter that is a field of the route's JSON body ({@link BodyFields}) is told where it
 * belongs: `dryRun: a field of the JSON body, not a query parameter: send it in the body, e.g.
 * {"dryRun": true}`; any other is unknown (`foo: unknown query parameter "foo": remove it`).
 * Applied with the API-key guard to the controller of the write routes, after it (a request
 * without a key is still 401 first).
 */
import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { z } from 'zod';
import { InvalidRequestError } from '@lib/session';
import { validateQuery } from './validate';

/** No query parameter at all. */
const NO_QUERY = z.strictObject({});

/**
 * Route decorator: the zod object schema of the route's JSON body, so that a query parameter
 * named like one of its fields is answered with where it belongs (the body) instead of "remove it".
 */
export const BodyFields = Reflector.createDecorator<z.ZodObject>();

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

/** Refuses query parameters on write requests; see the module doc. */
@Injectable()
export class WritesTakeNoQueryGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  /**
   * @throws InvalidRequestError (400 `validation_failed`, `parameter` the first query parameter) on a write
   *   request with a query parameter: one named like a field of the route's {@link BodyFields} is told to go
   *   in the JSON body (with an example body when one is sure to be right), any other is unknown.
   */
  canActivate(context: ExecutionContext): boolean {
    const { method, query } = context.switchToHttp().getRequest<{ method: string; query: unknown }>();
    // Most writes carry no query: nothing to validate (the schema would accept the empty object).
    if (method === 'GET' || method === 'HEAD' || isEmptyObject(query)) return true;
    const body = this.reflector.get(BodyFields, context.getHandler());
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
    validateQuery(NO_QUERY, query);
    return true;
  }
}
