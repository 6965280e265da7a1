/**
 * Where the audit page's static files (`apps/session-service/ui`: HTML, CSS and one ES module, no
 * build step) are, whether the service runs from the sources (ts-node, jest) or from `dist/`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FastifyInstance } from 'fastify';

/** The URL prefix the page is served under. */
export const UI_PREFIX = '/ui';

/** The files of the page served under {@link UI_PREFIX} (paths below it); anything else in its directory, such as its `tsconfig.json`, is not served. */
export const UI_FILES: ReadonlySet<string> = new Set(['/index.html', '/app.js', '/style.css']);

/**
 * `@fastify/static`'s `allowedPath`: whether the (normalized) path below {@link UI_PREFIX} is one of
 * {@link UI_FILES}, or `/` (the index). Others are answered 404 `route_not_found` like any unknown path.
 */
export function isUiFile(pathName: string): boolean {
  return pathName === '/' || UI_FILES.has(pathName);
}

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
