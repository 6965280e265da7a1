/**
 * What one request's log line says about the request and its answer (pino-http serializers):
 * request id, method, path (no query string: it may carry search text), the tenant when API keys are configured,
 * status and, for an error, its code (`counting_timeout` or `store_unavailable` of a 503); never
 * headers or bodies. Values the client chooses are cut to {@link MAX_LOGGED_VALUE_LENGTH}: a
 * 5,000-character session id must not make a 5 KB log line.
 */
import type { FastifyInstance } from 'fastify';
import type { TenantRequest } from '../auth/api-key.guard';

/** Longest request value (path, method) logged as is, in UTF-16 code units; longer ones are cut with a marker. */
export const MAX_LOGGED_VALUE_LENGTH = 256;

/**
 * `value` when it has at most `max` UTF-16 code units; else its first `max` (one fewer rather than
 * half a surrogate pair) followed by `…(N more characters)`, N being what was cut.
 */
export function truncatedForLog(value: string, max = MAX_LOGGED_VALUE_LENGTH): string {
  if (value.length <= max) return value;
  const last = value.charCodeAt(max - 1);
  const kept = last >= 0xd800 && last <= 0xdbff ? max - 1 : max;
  return `${value.slice(0, kept)}…(${value.length - kept} more characters)`;
}

/** Where {@link logAnswerCodes} keeps an answer's tenant and error code: on the raw Node response, which the serializers see. */
const LOGGED_TENANT = Symbol('logged tenant');
const LOGGED_CODE = Symbol('logged error code');

/** The error code of an error answer's JSON body (`{"code": …}`), or undefined. Error bodies are small; others are not parsed. */
function errorCodeOf(payload: unknown): string | undefined {
  const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) && payload.length <= 65_536 ? payload.toString('utf8') : undefined;
  if (text === undefined || !text.startsWith('{')) return undefined;
  try {
    const code = (JSON.parse(text) as { code?: unknown }).code;
    return typeof code === 'string' ? truncatedForLog(code, 64) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Makes `app` record, on each answer's raw response, the request's tenant (set by the key check
 * when `API_KEYS` is configured) and, for an answer of status 400 or more, its error code, for the
 * request log line ({@link requestLogSerializers}): operators tell a 503 `counting_timeout` from a
 * `store_unavailable`, and whose requests they were. An `onSend` hook: every answer Fastify sends,
 * the ones given before the body included.
 */
export function logAnswerCodes(app: FastifyInstance): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    const raw = reply.raw as unknown as Record<symbol, string | undefined>;
    const tenant = (request as TenantRequest).tenantId;
    if (tenant !== undefined) raw[LOGGED_TENANT] = tenant;
    if (reply.statusCode >= 400) raw[LOGGED_CODE] = errorCodeOf(payload);
    done(null, payload);
  });
}

/** The raw Node response of a pino serializer's argument (pino-std-serializers keep it as `raw`). */
function rawOf(res: object): Record<symbol, string | undefined> | undefined {
  return (res as { raw?: Record<symbol, string | undefined> }).raw;
}

/**
 * pino-http serializers of the request log line: `req` → `{ id, method, url }` (the request id,
 * `requestIdOf` in request-id.ts; the path only, method and path cut by {@link truncatedForLog}), `res` → `{ statusCode, tenant?, code? }` (what {@link logAnswerCodes}
 * recorded).
 */
export const requestLogSerializers = {
  req: (req: { id?: unknown; method: string; url: string }) => ({
    ...(req.id === undefined ? {} : { id: req.id }),
    method: truncatedForLog(req.method),
    url: truncatedForLog(req.url.split('?')[0]),
  }),
  res: (res: { statusCode: number }) => {
    const raw = rawOf(res);
    const tenant = raw?.[LOGGED_TENANT];
    const code = raw?.[LOGGED_CODE];
    return { statusCode: res.statusCode, ...(tenant === undefined ? {} : { tenant }), ...(code === undefined ? {} : { code }) };
  },
};
