'use strict';
/**
 * A ts-node transpiler (its `transpiler` option, see test/support/ts-node-tests.tsconfig.json) for
 * the test runs: TypeScript's own `transpileModule`, the output kept on disk and reused while the
 * file's text, name and compiler options are the same. A process started from the sources (the
 * service as a child process, its worker threads under jest, the conformance and replay scripts)
 * otherwise transpiles its ~150 modules again at every start: 3–10 s of CPU each time on a 2-core
 * machine. The JavaScript it runs is the same either way (same compiler, same options).
 *
 * Cache: `node_modules/.cache/ts-node-tests/<sha256>.json` (`npm ci` starts it afresh). A file with
 * diagnostics (a syntax error) is never cached, so the error is reported at every load. Entries are
 * written to a temporary file and renamed, so concurrent processes never read a partial entry.
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

/** Where the transpiled modules are kept. */
const CACHE_DIR = path.resolve(__dirname, '..', '..', 'node_modules', '.cache', 'ts-node-tests');

/**
 * ts-node's transpiler factory.
 * @param {{ service: { config: { options: object }, projectLocalResolveHelper: (name: string, fallback: boolean) => string } }} createOptions
 * @returns {{ transpile(input: string, options: { fileName: string }): { outputText: string, sourceMapText?: string, diagnostics?: unknown[] } }}
 */
function create(createOptions) {
  const ts = require(createOptions.service.projectLocalResolveHelper('typescript', true));
  const compilerOptions = createOptions.service.config.options;
  const optionsKey = JSON.stringify([ts.version, compilerOptions]);
  try {
    fs.mkdirSync(CACHE_DIR, { recursive: true });
  } catch {
    // a read-only tree: every write below fails too, and each module is transpiled as without the cache
  }
  return {
    transpile(input, { fileName }) {
      const key = crypto.createHash('sha256').update(optionsKey).update('\0').update(fileName).update('\0').update(input).digest('hex');
      const file = path.join(CACHE_DIR, `${key}.json`);
      try {
        const cached = JSON.parse(fs.readFileSync(file, 'utf8'));
        return { outputText: cached.outputText, sourceMapText: cached.sourceMapText };
      } catch {
        // not cached yet (or an unreadable entry): transpile it
      }
      const result = ts.transpileModule(input, { fileName, compilerOptions, reportDiagnostics: true });
      if (!result.diagnostics || result.diagnostics.length === 0) {
        const temporary = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
        try {
          fs.writeFileSync(temporary, JSON.stringify({ outputText: result.outputText, sourceMapText: result.sourceMapText }));
          fs.renameSync(temporary, file);
        } catch {
          try {
            fs.rmSync(temporary, { force: true }); // a full disk or a read-only tree: run uncached
          } catch {
            // nothing was written
          }
        }
      }
      return result;
    },
  };
}

module.exports = { create, CACHE_DIR };
