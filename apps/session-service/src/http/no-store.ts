/**
 * `Cache-Control: no-store` on every answer under `/v1` (windows, events, recall snippets, summaries:
 * conversation text) and on `/health` (the audit page's other read): no browser or proxy cache keeps
 * them after the audit page's "Forget API key" or after an erasure. Other answers (`/ui`'s files,
 * `/docs`, `/metrics`) are left to the defaults.
 */
import type { FastifyInstance } from 'fastify';

/** Whether an answer to `url` (path and query) is one {@link forbidCachingOfData} marks `no-store`. */
export function isUncacheablePath(url: string): boolean {
  const path = url.split('?')[0];
  return path === '/v1' || path.startsWith('/v1/') || path === '/health' || path.startsWith('/health/');
}

/** Adds an `onRequest` hook setting `Cache-Control: no-store` on the answers {@link isUncacheablePath} names, error answers included. */
export function forbidCachingOfData(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    if (isUncacheablePath(request.url)) void reply.header('cache-control', 'no-store');
    done();
  });
}
