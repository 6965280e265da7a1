'use strict';
/**
 * Jest setup file (jest.config.js `setupFilesAfterEnv`): a failed expectation that holds a bigint
 * (a revision, a position) is reported as such, not as "Test suite failed to run: TypeError: Do not
 * know how to serialize a BigInt". Test files run in workers (workerIdleMemoryLimit makes even one
 * file run in one), and a worker sends its results to jest as JSON, which has no bigint: the whole
 * file's report was lost, its failure unexplained (2026-12-05, a time-travel property in CI).
 * The worker's own realm (not the test file's sandbox, whose BigInt stays as the language has it)
 * gets `BigInt.prototype.toJSON`, giving a bigint as its decimal digits and `n` (`255n`).
 */
require('node:vm').runInThisContext(
  "if (!Object.prototype.hasOwnProperty.call(BigInt.prototype, 'toJSON')) Object.defineProperty(BigInt.prototype, 'toJSON', { value: function () { return `${this}n`; }, configurable: true })",
);
