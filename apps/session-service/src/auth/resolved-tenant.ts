/**
 * The tenant the key check resolved for a request, kept by its Node request (`request.raw`), for
 * the answers given outside Fastify's request: a 408 `request_timeout` of a body that stalled after
 * its key was checked is counted and logged under that tenant, as the request's other answers are
 * (newcomer ncops73 F5: counted with `tenant="none"`).
 */

/** Tenants by Node request (a WeakMap: nothing kept once the request is gone). */
const tenants = new WeakMap<object, string>();

/** Records that the key check resolved `tenant` (one of `API_KEYS`' tenants, or `default` in open mode) for the Node request `raw`. */
export function recordResolvedTenant(raw: object, tenant: string): void {
  tenants.set(raw, tenant);
}

/** The tenant recorded for the Node request `raw` by {@link recordResolvedTenant}, or undefined when its key was not checked (yet) or is unknown. */
export function resolvedTenantOf(raw: object): string | undefined {
  return tenants.get(raw);
}
