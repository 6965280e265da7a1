/**
 * Jest projects:
 *  - unit: pure library tests next to the code (libs/**\/*.spec.ts)
 *  - e2e:  the service over HTTP, conformance vectors, replay (test/**\/*.e2e-spec.ts)
 *  - slow: crash and race tests that spawn and kill processes (test/slow/**\/*.slow-spec.ts)
 * `npm test` runs all three; `npx jest --selectProjects unit` runs one.
 */
const moduleNameMapper = {
  '^@lib/compaction$': '<rootDir>/libs/compaction/src',
  '^@lib/event-store$': '<rootDir>/libs/event-store/src',
  '^@lib/event-store/(postgres|kurrentdb)$': '<rootDir>/libs/event-store/src/$1',
  '^@lib/session$': '<rootDir>/libs/session/src',
  '^@lib/client$': '<rootDir>/libs/client/src',
};
const transform = { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.spec.json' }] };
// A worker whose event loop is blocked for minutes is ended, naming its file (test/support/event-loop-watchdog.js);
// a failure holding a bigint reaches the report (test/support/bigint-failure-messages.js); values the append path
// shares without copying are frozen, so a change to one fails where it is made (test/support/freeze-shared-values.js).
const setupFilesAfterEnv = [
  '<rootDir>/test/support/event-loop-watchdog.js',
  '<rootDir>/test/support/bigint-failure-messages.js',
  '<rootDir>/test/support/freeze-shared-values.js',
];
const common = { rootDir: __dirname, testEnvironment: 'node', moduleFileExtensions: ['ts', 'js', 'json'], moduleNameMapper, transform, setupFilesAfterEnv };
const os = require('node:os');

module.exports = {
  // Test files run two or more at a time, even on 2 cores (jest's default there, one fewer worker than cores,
  // is one: every file in turn, in jest's own process). Most files wait on child processes, servers and timers:
  // on 2 cores the whole run took about 12 minutes with 2 workers against 30 in turn (2026-12-04), all passing.
  maxWorkers: Math.max(2, (os.availableParallelism?.() ?? os.cpus().length) - 1),
  // A worker runs hundreds of files in turn and its heap grows with them: one reached V8's 4 GB limit after
  // 19 minutes (2026-12-05, "JavaScript heap out of memory", its file failed). A worker over 1 GB after a file is
  // replaced by a fresh one.
  workerIdleMemoryLimit: '1GB',
  // watchman can hang in sandboxes without it; node's crawler is fast enough for this tree.
  watchman: false,
  // Per-test limit; suites that spawn processes or replay conversations set their own with jest.setTimeout.
  testTimeout: 60000,
  // Processes and worker threads started from the sources reuse ts-node's transpiled modules (see the file).
  globalSetup: '<rootDir>/test/support/jest-global-setup.js',
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/libs/**/*.spec.ts', '<rootDir>/apps/**/*.spec.ts'] },
    { ...common, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'] },
    { ...common, displayName: 'slow', testMatch: ['<rootDir>/test/slow/**/*.slow-spec.ts'] },
  ],
};
