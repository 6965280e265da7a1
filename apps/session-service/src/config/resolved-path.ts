/**
 * The path a file is really reached at, symbolic links resolved, also for a file that does not
 * exist yet: what tells two differently written paths (a `DATA_DIR` reached through a link, a
 * `SQLITE_EVENTS_FILE` that is a link) apart from one file.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Most symbolic links followed for one path (Linux's own bound, `MAXSYMLINKS`, is 40): a loop ends there. */
const MAX_LINKS = 40;

/**
 * `target` (absolute or relative to the working directory) with every symbolic link resolved:
 * `fs.realpathSync` of it when it exists; else, when it is a dangling symbolic link, the resolved
 * path of what the link points at (a relative link read against the link's directory), so that a
 * link to a file not created yet names that file; else the resolved path of its nearest existing
 * parent directory joined with the rest. Absolute and normalized. Never throws: a path that cannot
 * be looked at (no permission, a loop of links) keeps that part as written.
 */
export function resolvedPath(target: string): string {
  return resolve(path.resolve(target), 0);
}

/** {@link resolvedPath} of the absolute `target`, `links` symbolic links followed so far. */
function resolve(target: string, links: number): string {
  try {
    return fs.realpathSync(target);
  } catch {
    // missing, a dangling link, a loop, or a part that cannot be looked at
  }
  const parent = path.dirname(target);
  if (parent === target) return target;
  const dir = resolve(parent, links);
  const here = path.join(dir, path.basename(target));
  let link: string | undefined;
  try {
    if (links < MAX_LINKS && fs.lstatSync(here, { throwIfNoEntry: false })?.isSymbolicLink()) link = fs.readlinkSync(here);
  } catch {
    link = undefined;
  }
  return link === undefined ? here : resolve(path.resolve(dir, link), links + 1);
}
