'use strict';
/**
 * Jest's global setup (jest.config.js), run once before any test file: every process or worker
 * thread the tests start from the sources through ts-node (and inherit this environment from)
 * uses test/support/ts-node-tests.tsconfig.json, whose transpiler keeps the transpiled modules on
 * disk (see ts-node-cached-transpiler.js). Left alone when TS_NODE_PROJECT is set already.
 */
const path = require('node:path');

/** Path of the tsconfig that ts-node and tsconfig-paths read in the test runs. */
const TESTS_TSCONFIG = path.join(__dirname, 'ts-node-tests.tsconfig.json');

module.exports = async function globalSetup() {
  process.env.TS_NODE_PROJECT ??= TESTS_TSCONFIG;
};
