/**
 * The line of a writer thread that died names SQLite's reason (healthfix saw `/health`'s
 * `lastWriteError.message` read "SQLite writer thread failed: undefined" under a held lock).
 */
import { describeThreadError } from '../src/sqlite/sqlite-writer-client';

describe("a writer thread's uncaught error, as the parent receives it", () => {
  it('names the SQLite code and message of an error that has both', () => {
    expect(describeThreadError(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }))).toBe('SQLITE_BUSY: database is locked');
  });

  it('never says undefined: a cloned error without a message gives its code, its name, or its text', () => {
    expect(describeThreadError({ code: 'SQLITE_BUSY' })).toBe('SQLITE_BUSY');
    expect(describeThreadError({ name: 'SqliteError' })).toBe('SqliteError');
    expect(describeThreadError('disk I/O error')).toBe('disk I/O error');
    expect(describeThreadError(undefined)).toBe('an error without a message');
    expect(describeThreadError({})).toBe('an error without a message');
  });
});
