/**
 * Where the audit page's static files (`apps/session-service/ui`: HTML, CSS and one ES module, no
 * build step) are, whether the service runs from the sources (ts-node, jest) or from `dist/`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FastifyInstance } from 'fastify';

/** The URL prefix the page is served under. */
export const UI_PREFIX = '/ui';

/** The directory holding `index.html`. @throws Error naming the places looked at when it is missing. */
export function uiDirectory(): string {
  const candidates = [path.resolve(__dirname, '..', '..', 'ui'), path.resolve(__dirname, '..', '..', '..', '..', '..', 'apps', 'session-service', 'ui')];
  const found = candidates.find((dir) => fs.existsSync(path.join(dir, 'index.html')));
  if (!found) throw new Error(`the audit page's files are missing (looked in ${candidates.join(', ')})`);
  return found;
}

/** The path browsers ask for a site icon at. */
export const FAVICON_PATH = '/favicon.ico';

/**
 * Answers `GET` (and `HEAD`) {@link FAVICON_PATH} with 204 No Content: the service has no icon,
 * and a browser visiting `/ui` (or `/docs`) would otherwise get a 404 error body on every visit.
 * The `/ui` page itself declares an empty icon (`data:,`), so it asks for none.
 */
export function answerFavicon(fastify: FastifyInstance): void {
  fastify.get(FAVICON_PATH, (_request, reply) => {
    void reply.code(204).send();
  });
}
