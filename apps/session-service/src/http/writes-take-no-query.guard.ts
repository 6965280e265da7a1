/**
 * Write routes take no query parameter: a request with any method but GET and HEAD that carries
 * one is refused with 400 `validation_failed` (`dryRun: unknown query parameter "dryRun": remove
 * it`) before anything is read or written (`POST …/compactions?dryRun=true` compacted for real when
 * the parameter was ignored). Applied with the API-key guard to the controller of the write routes,
 * after it (a request without a key is still 401 first).
 */
import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { z } from 'zod';
import { validateQuery } from './validate';

/** No query parameter at all. */
const NO_QUERY = z.strictObject({});

/** True when `value` is an object without own enumerable keys (how the router gives a request without query). */
function isEmptyObject(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  for (const key in value) if (Object.hasOwn(value, key)) return false;
  return true;
}

/** Refuses query parameters on write requests; see the module doc. */
@Injectable()
export class WritesTakeNoQueryGuard implements CanActivate {
  /** @throws InvalidRequestError (400 `validation_failed`, `parameter` the first query parameter) on a write request with a query parameter. */
  canActivate(context: ExecutionContext): boolean {
    const { method, query } = context.switchToHttp().getRequest<{ method: string; query: unknown }>();
    // Most writes carry no query: nothing to validate (the schema would accept the empty object).
    if (method !== 'GET' && method !== 'HEAD' && !isEmptyObject(query)) validateQuery(NO_QUERY, query);
    return true;
  }
}
