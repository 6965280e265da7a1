'use strict';
/**
 * Jest setup file (jest.config.js `setupFilesAfterEnv`): values the append path shares without
 * copying (a request's validated metadata, the payload the SQLite store gives its first reader) are
 * deep-frozen in test runs, in the test worker and in every process it starts, so code that changes
 * one fails where it does (libs/event-store/src/shared-value-freeze.ts). Set before the test file
 * imports the libraries, which read it once as they load.
 */
process.env.SESSION_FREEZE_SHARED_VALUES = '1';
