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
const common = { rootDir: __dirname, testEnvironment: 'node', moduleFileExtensions: ['ts', 'js', 'json'], moduleNameMapper, transform };
module.exports = {
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
