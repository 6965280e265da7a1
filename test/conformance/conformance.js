#!/usr/bin/env node
'use strict';
/**
 * `npm run conformance -- [dir]`: says a missing vectors folder at once, exit code 2 (before
 * loading ts-node, which takes seconds), then runs run-conformance.ts (which parses the options).
 */
const { vectorsFolder } = require('./vectors-folder');
const { holdSignalsWhileLoading } = require('./loading-signals');

// A stop while ts-node and the runner load says so (run-conformance.ts takes the signals over before the first vector).
holdSignalsWhileLoading('conformance');

const arg = process.argv[2];
if (arg === undefined || !arg.startsWith('-')) {
  const { problem } = vectorsFolder(arg);
  if (problem) {
    process.stderr.write(`${problem}\n`);
    process.exit(2);
  }
}
require('ts-node').register({ transpileOnly: true });
require('tsconfig-paths/register');
require('./run-conformance.ts');
