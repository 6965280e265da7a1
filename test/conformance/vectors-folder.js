'use strict';
/**
 * The vectors folder of `npm run conformance` and what to say when it is missing: plain
 * JavaScript, so that conformance.js says it before ts-node loads (seconds), and
 * run-conformance.ts says the same line when run directly.
 */
const fs = require('node:fs');
const path = require('node:path');
const { sharedDirLocation } = require('../support/shared-dir-location');

/**
 * The line saying `dir` is not a folder of vectors, and the fix: for the default (`isDefault`: the
 * team's shared folder beside the clone, or `SHARED_DIR`) where it was looked for; for a folder
 * given on the command line, to check the path.
 * @param {string} dir
 * @param {boolean} isDefault
 * @returns {string}
 */
function missingVectorsMessage(dir, isDefault) {
  const give = 'or pass a folder of vector files: npm run conformance -- <dir>';
  if (!isDefault) return `conformance: ${dir} is not a readable folder of vector files: check the path, ${give}`;
  const shared = sharedDirLocation();
  return (
    `conformance: ${dir} is not a readable folder of vector files: the vectors are in the team's shared folder, expected at ${shared}; ` +
    `link or copy it there (e.g. ln -s /path/to/shared ${shared}), set SHARED_DIR to where it is, ${give}`
  );
}

/**
 * The folder to run (`arg`, the command line's folder, or `<shared>/conformance/vectors`) and,
 * when it is not a folder, the line to print (else null).
 * @param {string | undefined} arg
 * @returns {{ dir: string, problem: string | null }}
 */
function vectorsFolder(arg) {
  const dir = arg ?? path.join(sharedDirLocation(), 'conformance', 'vectors');
  const ok = fs.existsSync(dir) && fs.statSync(dir).isDirectory();
  return { dir, problem: ok ? null : missingVectorsMessage(dir, arg === undefined) };
}

module.exports = { missingVectorsMessage, vectorsFolder };
