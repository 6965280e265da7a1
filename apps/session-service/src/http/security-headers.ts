/**
 * Browser-hardening headers on every answer (the audit page at `/ui`, Swagger UI at `/docs`, the API),
 * set by `@fastify/helmet` (helmet 8) before any route or hook that may answer:
 * - `Content-Security-Policy`: {@link SERVICE_CSP} everywhere (the audit page loads only its own
 *   `/ui/app.js` module and `/ui/style.css`, no inline script or style, no font, and fetches only its
 *   own origin's `/v1` and `/health`); {@link DOCS_CSP} on the routes under `/docs` (Swagger UI's page
 *   has an inline `<style>` and `style` attributes, its scripts are files of its own);
 *   both forbid framing (`frame-ancestors 'none'`), plugins and `<base>`;
 * - `X-Frame-Options: DENY` (browsers without CSP level 2), `X-Content-Type-Options: nosniff`,
 *   `Referrer-Policy: no-referrer`, and helmet's other defaults (`Cross-Origin-Opener-Policy` and
 *   `Cross-Origin-Resource-Policy: same-origin`, `Origin-Agent-Cluster: ?1`); all declared in the
 *   OpenAPI document (`openapi-response-headers.ts`).
 *
 * Helmet's legacy headers are off: they do nothing for a JSON API and its two pages
 * (`X-XSS-Protection`, `X-Download-Options`, `X-Permitted-Cross-Domain-Policies`,
 * `X-DNS-Prefetch-Control`).
 *
 * Not sent: `Strict-Transport-Security` (the service speaks plain HTTP; HSTS is the TLS proxy's
 * decision, as it pins the whole domain) and `upgrade-insecure-requests` (it would make a page
 * served over plain HTTP from another name than localhost, e.g. a Docker host, load its script over
 * HTTPS and fail). Answers given before this hook runs (a request without Host, one arriving while
 * the service shuts down) carry no such headers: they are short JSON errors.
 */
import fastifyHelmet, { type FastifyHelmetOptions } from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';

/** The prefix of Swagger UI's routes (its page, its assets, `openapi.json`). */
export const DOCS_PREFIX = '/docs';

/** Directives common to both policies: nothing may frame the page, no plugins, no `<base>`, forms post only to the service. */
const COMMON_DIRECTIVES = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  connectSrc: ["'self'"],
  // The audit page declares an empty icon (`data:,`); Swagger UI draws some icons as data: images.
  imgSrc: ["'self'", 'data:'],
  objectSrc: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
};

/** The policy of `/ui` and of every other answer (a JSON answer's policy only matters if a browser opens it): scripts and styles only from the service's own files. */
export const SERVICE_CSP = { useDefaults: false, directives: { ...COMMON_DIRECTIVES, styleSrc: ["'self'"] } };

/** Swagger UI's policy at `/docs`: {@link SERVICE_CSP} plus inline styles (its page's `<style>` element and `style` attributes). */
export const DOCS_CSP = { useDefaults: false, directives: { ...COMMON_DIRECTIVES, styleSrc: ["'self'", "'unsafe-inline'"] } };

/** Helmet's options for every answer: {@link SERVICE_CSP}, frames denied, no HSTS, no legacy headers. */
const SERVICE_HELMET: FastifyHelmetOptions = {
  global: true,
  contentSecurityPolicy: SERVICE_CSP,
  frameguard: { action: 'deny' },
  referrerPolicy: { policy: 'no-referrer' },
  strictTransportSecurity: false,
  xXssProtection: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xDnsPrefetchControl: false,
};

/**
 * Registers the headers on `fastify` (call before the first hook that may answer, and before the
 * routes under {@link DOCS_PREFIX} and `/ui` are registered: routes registered later under
 * `/docs` get {@link DOCS_CSP} through their route config, which `@fastify/helmet` reads per request).
 */
export async function useSecurityHeaders(fastify: FastifyInstance): Promise<void> {
  await fastify.register(fastifyHelmet, SERVICE_HELMET);
  fastify.addHook('onRoute', (route) => {
    if (route.url === DOCS_PREFIX || route.url.startsWith(`${DOCS_PREFIX}/`))
      route.config = Object.assign(route.config ?? {}, { helmet: { contentSecurityPolicy: DOCS_CSP } });
  });
}
