/**
 * Browser-hardening headers on every answer (the audit page at `/ui`, Swagger UI at `/docs`, the API),
 * as helmet 8 makes them, set before any route or hook that may answer:
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
import helmet, { type HelmetOptions } from 'helmet';
import type { ServerResponse } from 'node:http';
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
export const SERVICE_HELMET: HelmetOptions = {
  contentSecurityPolicy: SERVICE_CSP,
  frameguard: { action: 'deny' },
  referrerPolicy: { policy: 'no-referrer' },
  strictTransportSecurity: false,
  xXssProtection: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xDnsPrefetchControl: false,
};

/** Helmet's options for the routes under {@link DOCS_PREFIX}: {@link SERVICE_HELMET} with {@link DOCS_CSP}. */
export const DOCS_HELMET: HelmetOptions = { ...SERVICE_HELMET, contentSecurityPolicy: DOCS_CSP };

/** What helmet's middleware does to a response, in its order: `[name, value]` sets a header (name as helmet writes it), `[name]` removes one. */
export type SecurityHeaderWrites = ReadonlyArray<readonly [name: string, value?: string]>;

/**
 * The headers helmet's middleware for `options` writes, recorded once by running it on a response
 * that only records (helmet's headers for these options depend on nothing in the request).
 * @throws Error when the middleware does not finish at once (then its headers are not static).
 */
export function securityHeaderWrites(options: HelmetOptions): SecurityHeaderWrites {
  const writes: Array<[string, string?]> = [];
  const recorder = {
    setHeader: (name: string, value: string | number | readonly string[]) => writes.push([name, String(value)]),
    removeHeader: (name: string) => writes.push([name]),
  };
  let finished = false;
  helmet(options)({} as never, recorder as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error instanceof Error ? error : new Error('helmet failed', { cause: error });
    finished = true;
  });
  if (!finished) throw new Error('helmet did not finish synchronously: its headers cannot be computed once');
  return writes;
}

/** Route config key naming the header writes a route's answers get ({@link useSecurityHeaders}). */
const SECURITY_HEADERS = 'securityHeaders';

/**
 * Registers the headers on `fastify` (call before the first hook that may answer, and before the
 * routes under {@link DOCS_PREFIX} and `/ui` are registered: routes registered later under
 * `/docs` get {@link DOCS_CSP} through their route config). The headers are computed once per
 * policy ({@link securityHeaderWrites}) and written on the raw response by one synchronous
 * `onRequest` hook, as `@fastify/helmet` wrote them (it ran helmet's whole set-up, options
 * parsed and CSP directives checked, in two hooks on every request).
 */
export function useSecurityHeaders(fastify: FastifyInstance): void {
  const service = securityHeaderWrites(SERVICE_HELMET);
  const docs = securityHeaderWrites(DOCS_HELMET);
  fastify.addHook('onRoute', (route) => {
    if (route.url === DOCS_PREFIX || route.url.startsWith(`${DOCS_PREFIX}/`)) route.config = Object.assign(route.config ?? {}, { [SECURITY_HEADERS]: docs });
  });
  fastify.addHook('onRequest', (request, reply, done) => {
    const writes = (request.routeOptions.config as { [SECURITY_HEADERS]?: SecurityHeaderWrites } | undefined)?.[SECURITY_HEADERS] ?? service;
    const raw = reply.raw;
    for (const [name, value] of writes) {
      if (value === undefined) raw.removeHeader(name);
      else raw.setHeader(name, value);
    }
    done();
  });
}

/** {@link SERVICE_HELMET}'s writes, once computed ({@link securityHeaderWrites}). */
let serviceWrites: SecurityHeaderWrites | undefined;

/**
 * Writes the service's security headers ({@link SERVICE_HELMET}) and `Cache-Control: no-store` on
 * `raw`, for an answer given before any `onRequest` hook ran (Fastify's `frameworkErrors`: a path
 * that is not valid percent-encoding answered 400 `invalid_path` without them; newcomer
 * ncopenapifuzz F1). An error answer holds no data a cache could keep, so `no-store` on every one.
 */
export function writeEarlyAnswerHeaders(raw: Pick<ServerResponse, 'setHeader' | 'removeHeader'>): void {
  serviceWrites ??= securityHeaderWrites(SERVICE_HELMET);
  for (const [name, value] of serviceWrites) {
    if (value === undefined) raw.removeHeader(name);
    else raw.setHeader(name, value);
  }
  raw.setHeader('Cache-Control', 'no-store');
}

/**
 * The headers of {@link writeEarlyAnswerHeaders} as `Name: value\r\n` lines, for an answer written
 * on the socket itself (a request Node's parser refused: 414, 431, 400 `malformed_request`, 408).
 */
export function earlyAnswerHeaderLines(): string {
  serviceWrites ??= securityHeaderWrites(SERVICE_HELMET);
  return `${serviceWrites
    .filter((write): write is readonly [string, string] => write[1] !== undefined)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}Cache-Control: no-store\r\n`;
}
