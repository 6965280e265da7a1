'use strict';
/**
 * Preload for tests of a script's start-up (`node -r <this> script.js`): writes `<request>\n` to file
 * descriptor 3 (a pipe the test opened) each time the process first requires one of the module names
 * listed in `REPORT_MODULE_LOAD` (comma-separated, e.g. `ts-node`), before loading it. A test then knows
 * the script's lines before that require have run (e.g. a signal handler is installed) without a
 * timed wait. Writes nothing when the variable is unset or descriptor 3 is not open.
 */
const Module = require('node:module');
const fs = require('node:fs');

const watched = new Set((process.env.REPORT_MODULE_LOAD ?? '').split(',').filter((name) => name !== ''));
if (watched.size > 0) {
  const load = Module._load;
  Module._load = function reportingLoad(request, ...rest) {
    if (watched.delete(request)) {
      try {
        fs.writeSync(3, `${request}\n`);
      } catch {
        // no descriptor 3: nobody listens
      }
    }
    return load.call(this, request, ...rest);
  };
}
