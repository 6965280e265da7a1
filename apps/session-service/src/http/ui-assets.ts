/**
 * Where the audit page's static files (`apps/session-service/ui`: HTML, CSS and one ES module, no
 * build step) are, whether the service runs from the sources (ts-node, jest) or from `dist/`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The URL prefix the page is served under. */
export const UI_PREFIX = '/ui';

/** The directory holding `index.html`. @throws Error naming the places looked at when it is missing. */
export function uiDirectory(): string {
  const candidates = [path.resolve(__dirname, '..', '..', 'ui'), path.resolve(__dirname, '..', '..', '..', '..', '..', 'apps', 'session-service', 'ui')];
  const found = candidates.find((dir) => fs.existsSync(path.join(dir, 'index.html')));
  if (!found) throw new Error(`the audit page's files are missing (looked in ${candidates.join(', ')})`);
  return found;
}
