'use strict';
/**
 * Where the team's shared folder is (`<repo>/../shared`, or `SHARED_DIR`): plain JavaScript, so
 * that `npm run conformance` can say it is missing before ts-node loads (test/conformance/conformance.js).
 * shared-dir.ts exports the same paths to the TypeScript suites.
 */
const path = require('node:path');

/**
 * Absolute path of the shared folder (it may not exist).
 * @param {NodeJS.ProcessEnv} [env] where `SHARED_DIR` is read (default process.env)
 * @returns {string}
 */
function sharedDirLocation(env = process.env) {
  return path.resolve(env.SHARED_DIR ?? path.join(__dirname, '..', '..', '..', 'shared'));
}

module.exports = { sharedDirLocation };
