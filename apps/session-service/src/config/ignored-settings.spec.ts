import { ignoredSettingLines } from './ignored-settings';
import { loadServiceConfig } from './service-config';

/** The lines for `env`, as main prints them (the configuration loaded from the same environment). */
const lines = (env: NodeJS.ProcessEnv): string[] => ignoredSettingLines(env, loadServiceConfig(env, false));

describe('settings that cannot apply: one warn line per group, "X is ignored because Y"', () => {
  it('says nothing when every setting applies', () => {
    expect(lines({})).toEqual([]);
    expect(lines({ SQLITE_EVENTS_FILE: '/tmp/e.sqlite', NATS_URL: 'nats://n1:4222', NATS_USER: 'bob', OPENAI_API_KEY: 'sk-x', SUMMARIZER_MODEL: 'm' })).toEqual(
      [],
    );
  });

  it('names SQLITE_EVENTS_FILE (even in a directory that does not exist) and SQLITE_WRITER_THREAD with another event store', () => {
    expect(
      lines({ DATABASE_URL: 'postgres://db/e', SQLITE_EVENTS_FILE: '/nonexistent/dir/x.sqlite', SQLITE_WRITER_THREAD: 'false', SQLITE_QUICK_CHECK: 'false' }),
    ).toEqual(['SQLITE_EVENTS_FILE, SQLITE_WRITER_THREAD are ignored because the event store is PostgreSQL (DATABASE_URL)']);
    expect(lines({ KURRENTDB_CONNECTION_STRING: 'kurrentdb://k:2113?tls=false', SQLITE_EVENTS_FILE: '/tmp/e.sqlite' })).toEqual([
      'SQLITE_EVENTS_FILE is ignored because the event store is KurrentDB (KURRENTDB_CONNECTION_STRING)',
    ]);
  });

  it('names ALLOWED_HOSTS with API_KEYS (the Host check is for open mode only)', () => {
    expect(lines({ API_KEYS: 'alice-key-2f9c:tenantA', ALLOWED_HOSTS: 'devbox' })).toEqual([
      'ALLOWED_HOSTS is ignored because API_KEYS is set (the Host check is for open development mode)',
    ]);
    expect(lines({ ALLOWED_HOSTS: 'devbox' })).toEqual([]);
  });

  it('names DATABASE_POOL_SIZE and DATABASE_STATEMENT_TIMEOUT_MS without DATABASE_URL', () => {
    expect(lines({ DATABASE_POOL_SIZE: '4', DATABASE_STATEMENT_TIMEOUT_MS: '2000' })).toEqual([
      'DATABASE_POOL_SIZE, DATABASE_STATEMENT_TIMEOUT_MS are ignored because DATABASE_URL is not set (the embedded SQLite store)',
    ]);
    expect(lines({ DATABASE_URL: 'postgres://db/e', DATABASE_POOL_SIZE: '4' })).toEqual([]);
  });

  it('names the NATS settings without NATS_URL, and the model settings without a model summarizer', () => {
    expect(lines({ NATS_USER: 'bob', NATS_PASSWORD: 'pw', NATS_CONCURRENCY: '4' })).toEqual([
      'NATS_USER, NATS_PASSWORD, NATS_CONCURRENCY are ignored because NATS_URL is not set (no NATS transport)',
    ]);
    expect(lines({ SUMMARIZER_MODEL: 'llama3', OPENAI_API_KEY: '' })).toEqual([
      'SUMMARIZER_MODEL is ignored because neither OPENAI_BASE_URL nor OPENAI_API_KEY is set (the extractive summarizer)',
    ]);
  });
});
