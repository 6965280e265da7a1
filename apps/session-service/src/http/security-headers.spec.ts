/**
 * The browser-hardening headers, computed once per policy, are the headers helmet's middleware
 * writes when run on each request (as `@fastify/helmet` ran it): same names, values and order, on
 * routes, under `/docs`, on a 404 and on an answer a later `onRequest` hook gives.
 */
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';
import { DOCS_HELMET, SERVICE_HELMET, securityHeaderWrites, useSecurityHeaders } from './security-headers';

/** Routes like the service's: the API, the audit page, Swagger UI's page and document; `/early` is answered by a hook. */
function addRoutes(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    if (request.url === '/early') void reply.code(403).send({ code: 'host_not_allowed' });
    else done();
  });
  for (const url of ['/v1/sessions', '/ui/', '/docs', '/docs/openapi.json', '/docs/static/x.css']) app.get(url, () => ({ ok: true }));
  app.post('/v1/sessions/:id/events', (_request, reply) => reply.code(201).send({ revision: 1 }));
}

/** The service's set-up. */
async function withSecurityHeaders(): Promise<FastifyInstance> {
  const app = Fastify();
  useSecurityHeaders(app);
  addRoutes(app);
  await app.ready();
  return app;
}

/** The reference: helmet's middleware run on every request, with the docs policy under `/docs`. */
async function withHelmetPerRequest(): Promise<FastifyInstance> {
  const app = Fastify();
  app.addHook('onRoute', (route) => {
    if (route.url === '/docs' || route.url.startsWith('/docs/')) route.config = Object.assign(route.config ?? {}, { docs: true });
  });
  app.addHook('onRequest', (request, reply, done) => {
    const options: HelmetOptions = (request.routeOptions.config as { docs?: boolean }).docs ? DOCS_HELMET : SERVICE_HELMET;
    helmet(options)(request.raw, reply.raw, () => done());
  });
  addRoutes(app);
  await app.ready();
  return app;
}

/** An answer's headers as sent, in order, without `date`. */
function headersOf(response: LightMyRequestResponse): string[] {
  const raw = response.raw.res.getHeaderNames();
  return raw.filter((name) => name !== 'date').map((name) => `${name}: ${String(response.raw.res.getHeader(name))}`);
}

describe('security headers computed once', () => {
  let ours: FastifyInstance;
  let reference: FastifyInstance;
  beforeAll(async () => {
    [ours, reference] = await Promise.all([withSecurityHeaders(), withHelmetPerRequest()]);
  });
  afterAll(() => Promise.all([ours.close(), reference.close()]));

  it.each([
    ['GET', '/v1/sessions'],
    ['POST', '/v1/sessions/s1/events'],
    ['GET', '/ui/'],
    ['GET', '/docs'],
    ['GET', '/docs?x=1'],
    ['GET', '/docs/openapi.json'],
    ['GET', '/docs/static/x.css'],
    ['GET', '/docs/no-such-file'],
    ['GET', '/no-such-route'],
    ['GET', '/early'],
  ] as const)('%s %s carries the headers helmet writes per request, in its order', async (method, url) => {
    const [a, b] = await Promise.all([ours.inject({ method, url }), reference.inject({ method, url })]);
    expect(a.statusCode).toBe(b.statusCode);
    expect(headersOf(a)).toEqual(headersOf(b));
    expect(a.headers['x-frame-options']).toBe('DENY');
  });

  it('gives /docs its own policy (inline styles) and every other answer the service policy', async () => {
    const styleSrc = async (url: string): Promise<string | undefined> =>
      String((await ours.inject({ url })).headers['content-security-policy'])
        .split(';')
        .find((directive) => directive.startsWith('style-src'));
    expect(await styleSrc('/docs')).toBe("style-src 'self' 'unsafe-inline'");
    expect(await styleSrc('/docs/openapi.json')).toBe("style-src 'self' 'unsafe-inline'");
    expect(await styleSrc('/ui/')).toBe("style-src 'self'");
    expect(await styleSrc('/no-such-route')).toBe("style-src 'self'");
  });

  it('records what helmet writes, removals included, in its order', () => {
    const writes = securityHeaderWrites(SERVICE_HELMET);
    expect(writes.map(([name]) => name)).toEqual([
      'Content-Security-Policy',
      'Cross-Origin-Opener-Policy',
      'Cross-Origin-Resource-Policy',
      'Origin-Agent-Cluster',
      'Referrer-Policy',
      'X-Content-Type-Options',
      'X-Frame-Options',
      'X-Powered-By',
    ]);
    expect(writes.at(-1)).toEqual(['X-Powered-By']);
  });
});
