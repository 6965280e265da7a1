'use strict';
/**
 * A `--require` preload for a service process (through NODE_OPTIONS): on SIGUSR2 it writes one line `loaded packages: <JSON array>` on stderr, the npm packages whose modules the
 * process's main thread loaded (names as in node_modules, scoped ones with their scope), so a test can check
 * that a driver or client the configuration does not use was never loaded.
 */
const fs = require('node:fs');
const { isMainThread } = require('node:worker_threads');

// The process's main thread only (its worker threads load this preload too, through NODE_OPTIONS).
if (isMainThread)
  process.on('SIGUSR2', () => {
    const names = new Set();
    for (const file of Object.keys(require.cache)) {
      const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file.split('\\').join('/'));
      if (match) names.add(match[1]);
    }
    fs.writeSync(2, `loaded packages: ${JSON.stringify([...names].sort())}\n`);
  });
