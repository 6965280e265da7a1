/**
 * API keys and tenants (issue 7): when `API_KEYS` is configured every `/v1` route needs a key
 * (`Authorization: Bearer <key>` or `x-api-key: <key>`), and the key's tenant scopes every read and
 * write. Without keys the service runs in open development mode: every request is tenant `default`.
 */
import { createParamDecorator, Inject, Injectable, UnauthorizedException, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { SERVICE_CONFIG } from '../config/tokens';
import type { ServiceConfig } from '../config/service-config';

/** Tenant of requests in open development mode. */
export const OPEN_MODE_TENANT = 'default';

/** Name of the OpenAPI security scheme for the `X-Api-Key` header (the other is the bearer scheme). */
export const API_KEY_HEADER_SCHEME = 'api-key';

/** Extracts the API key of a request (`Authorization: Bearer <key>` first, else `X-Api-Key`), or undefined. */
export function apiKeyOf(req: Pick<FastifyRequest, 'headers'>): string | undefined {
  const header = req.headers.authorization;
  if (typeof header === 'string' && /^bearer\s/i.test(header)) return header.slice(7).trim();
  const key = req.headers['x-api-key'];
  return typeof key === 'string' ? key.trim() : undefined;
}

/** Resolves the tenant of a request from its API key (or open mode); see the module doc. */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(@Inject(SERVICE_CONFIG) private readonly config: ServiceConfig) {}

  /** @throws UnauthorizedException (401 `unauthorized`) when keys are configured and the request has none or an unknown one. */
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<FastifyRequest & { tenantId?: string }>();
    if (this.config.apiKeys.size === 0) {
      req.tenantId = OPEN_MODE_TENANT;
      return true;
    }
    const key = apiKeyOf(req);
    const tenant = key ? this.config.apiKeys.get(key) : undefined;
    if (!tenant) throw new UnauthorizedException(key ? 'unknown API key' : 'this service needs an API key: send Authorization: Bearer <key>');
    req.tenantId = tenant;
    return true;
  }
}

/** Controller parameter: the tenant the guard resolved. */
export const Tenant = createParamDecorator((_: unknown, ctx: ExecutionContext): string => {
  return ctx.switchToHttp().getRequest<FastifyRequest & { tenantId?: string }>().tenantId ?? OPEN_MODE_TENANT;
});
