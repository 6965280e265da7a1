/**
 * API keys and tenants (issue 7): when `API_KEYS` is configured every `/v1` route needs a key
 * (`Authorization: Bearer <key>` or `x-api-key: <key>`), and the key's tenant scopes every read and
 * write. Without keys the service runs in open development mode: every request is tenant `default`.
 * The key is checked before the body is read (`key-check-before-body.ts`), and again by the guard,
 * both with {@link tenantOf}.
 */
import { createParamDecorator, Inject, Injectable, UnauthorizedException, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { SERVICE_CONFIG } from '../config/tokens';
import type { ServiceConfig } from '../config/service-config';
import type { RequestedBy } from '@lib/session';
import { isUsableRequestId, REQUEST_ID_HEADER } from '../observability/request-id';

/** Tenant of requests in open development mode. */
export const OPEN_MODE_TENANT = 'default';

/** Name of the OpenAPI security scheme for the `X-Api-Key` header (the other is the bearer scheme). */
export const API_KEY_HEADER_SCHEME = 'api-key';

/** A request whose raw header lines may be read (Fastify's, with Node's `IncomingMessage` as `raw`). */
type KeyedRequest = Pick<FastifyRequest, 'headers'> & { raw?: { rawHeaders?: readonly string[] } };

/**
 * The key header (`Authorization` or `X-Api-Key`, as sent) a request gives on more than one header
 * line, else undefined. Node keeps the first `Authorization` line and joins `X-Api-Key` lines, while
 * a proxy in front may read another one: two lines would let the two disagree on who the caller is
 * (newcomer ncsec62 F4), so such a request has no key ({@link apiKeyOf}) and is refused ({@link tenantOf}).
 */
export function repeatedKeyHeader(req: KeyedRequest): string | undefined {
  const raw = req.raw?.rawHeaders;
  if (!raw) return undefined;
  const seen = new Set<string>();
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (name !== 'authorization' && name !== 'x-api-key') continue;
    if (seen.has(name)) return raw[i];
    seen.add(name);
  }
  return undefined;
}

/** Extracts the API key of a request (`Authorization: Bearer <key>` first, else `X-Api-Key`), or undefined (none, or a key header given twice: {@link repeatedKeyHeader}). */
export function apiKeyOf(req: KeyedRequest): string | undefined {
  if (repeatedKeyHeader(req) !== undefined) return undefined;
  const header = req.headers.authorization;
  if (typeof header === 'string' && /^bearer\s/i.test(header)) return header.slice(7).trim();
  const key = req.headers['x-api-key'];
  return typeof key === 'string' ? key.trim() : undefined;
}

/** A request once its tenant is known ({@link tenantOf}: set by the early key check, and by {@link ApiKeyGuard}). */
export type TenantRequest = KeyedRequest & { tenantId?: string };

/** Each configured key's position in `API_KEYS` (1-based), by key map (made once per map). */
const keyPositions = new WeakMap<ReadonlyMap<string, string>, Map<string, number>>();

/**
 * The label of the request's API key for the audit: `API_KEYS#<n>`, its entry's position in
 * `API_KEYS` (1-based, as configuration errors name entries), never the key; undefined in open
 * development mode or for a key not configured. `apiKeys`: key → tenant, in `API_KEYS` order.
 */
export function apiKeyLabelOf(req: KeyedRequest, apiKeys: ReadonlyMap<string, string>): string | undefined {
  if (apiKeys.size === 0) return undefined;
  let positions = keyPositions.get(apiKeys);
  if (!positions) keyPositions.set(apiKeys, (positions = new Map([...apiKeys.keys()].map((key, i) => [key, i + 1]))));
  const position = positions.get(apiKeyOf(req) ?? '');
  return position === undefined ? undefined : `API_KEYS#${position}`;
}

/**
 * The tenant of a request: in open development mode (`apiKeys` empty) {@link OPEN_MODE_TENANT},
 * otherwise the tenant of its API key ({@link apiKeyOf}). The one decision on keys: the key
 * check before the body is read (`key-check-before-body.ts`) and {@link ApiKeyGuard} both make it here.
 * `apiKeys`: key → tenant (`API_KEYS`).
 * @throws UnauthorizedException (401 `unauthorized`) when keys are configured and the request has none
 *   (`this service needs an API key: send Authorization: Bearer <key>`), an unknown one (`unknown API
 *   key`), or a key header on two lines ({@link repeatedKeyHeader}).
 */
export function tenantOf(req: KeyedRequest, apiKeys: ReadonlyMap<string, string>): string {
  if (apiKeys.size === 0) return OPEN_MODE_TENANT;
  const repeated = repeatedKeyHeader(req);
  if (repeated !== undefined) throw new UnauthorizedException(`${repeated} is given on more than one header line: send the key once`);
  const key = apiKeyOf(req);
  const tenant = key ? apiKeys.get(key) : undefined;
  if (!tenant) throw new UnauthorizedException(key ? 'unknown API key' : 'this service needs an API key: send Authorization: Bearer <key>');
  return tenant;
}

/**
 * Resolves the tenant of a request ({@link tenantOf}) for its controller. Every `/v1` route is
 * checked before its body is read already (`key-check-before-body.ts`); the guard makes the same
 * decision again, so that a route it guards is never served without a key.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(@Inject(SERVICE_CONFIG) private readonly config: ServiceConfig) {}

  /** @throws UnauthorizedException (401 `unauthorized`) when keys are configured and the request has none or an unknown one. */
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<FastifyRequest & TenantRequest>();
    req.tenantId = tenantOf(req, this.config.apiKeys);
    (req as FastifyRequest & { apiKeyLabel?: string }).apiKeyLabel = apiKeyLabelOf(req, this.config.apiKeys);
    return true;
  }
}

/**
 * Controller parameter: who sent the request, for the decision, erasure record or policy event it writes (see
 * `RequestedBy`): the label {@link ApiKeyGuard} found for its key (never the key), the request's id
 * (the client's X-Request-Id when usable, else the one the service made), who chose it
 * (`requestIdFrom`: `client` or `service`), `via: 'http'`.
 */
export const Requester = createParamDecorator((_: unknown, ctx: ExecutionContext): RequestedBy => {
  const req = ctx.switchToHttp().getRequest<FastifyRequest & { apiKeyLabel?: string }>();
  // requestIdOf took the client's X-Request-Id exactly when it is usable: then the client chose the id.
  const requestIdFrom = isUsableRequestId(req.headers[REQUEST_ID_HEADER]) ? 'client' : 'service';
  return { ...(req.apiKeyLabel ? { keyLabel: req.apiKeyLabel } : {}), requestId: String(req.id), requestIdFrom, via: 'http' };
});

/** Controller parameter: the tenant the guard resolved. */
export const Tenant = createParamDecorator((_: unknown, ctx: ExecutionContext): string => {
  return ctx.switchToHttp().getRequest<TenantRequest>().tenantId ?? OPEN_MODE_TENANT;
});
