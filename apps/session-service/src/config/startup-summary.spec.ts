import * as path from 'node:path';
import { ExtractiveSummarizer, summarizerFromEnv } from '@lib/session';
import { loadServiceConfig } from './service-config';
import { startupStoreLine, startupSummarizerLine, startupUrl } from './startup-summary';

describe('start-up summary lines', () => {
  it('names the summarizer and, for a model summarizer, the endpoint host (never the path or a key)', () => {
    expect(startupSummarizerLine(new ExtractiveSummarizer())).toMatch(/^summarizer: extractive \(.+\)$/);
    const key = 'sk-startup-line-secret-1234';
    // OPENAI_API_KEY alone: the default endpoint, api.openai.com
    expect(startupSummarizerLine(summarizerFromEnv({ OPENAI_API_KEY: key }))).toBe(
      'summarizer: openai-compatible (gpt-4o-mini at api.openai.com, at most 250 calls per pass)',
    );
    const local = startupSummarizerLine(summarizerFromEnv({ OPENAI_BASE_URL: 'http://127.0.0.1:8080/v1', OPENAI_API_KEY: key, SUMMARIZER_MODEL: 'llama3' }));
    expect(local).toBe('summarizer: openai-compatible (llama3 at 127.0.0.1:8080, at most 250 calls per pass)');
    expect(local).not.toContain(key);
  });

  it('names the SQLite events file when SQLITE_EVENTS_FILE is set, else the DATA_DIR', () => {
    const dataDir = path.resolve('/tmp/startup-summary-data');
    expect(startupStoreLine(loadServiceConfig({ DATA_DIR: dataDir }, false))).toBe(`store: embedded SQLite in ${dataDir}`);
    const file = path.resolve('/tmp/shared/events.sqlite');
    expect(startupStoreLine(loadServiceConfig({ DATA_DIR: dataDir, SQLITE_EVENTS_FILE: file }, false))).toBe(
      `store: embedded SQLite ${file} (SQLITE_EVENTS_FILE); read models in ${dataDir}`,
    );
    expect(startupStoreLine(loadServiceConfig({ DATA_DIR: dataDir, DATABASE_URL: 'postgres://db/e' }, false))).toBe(
      `store: PostgreSQL db:5432/e (DATABASE_URL); read models in ${dataDir}`,
    );
    // an empty port is the default port, and the line says which (newcomer ncrecheck65 F4)
    expect(startupStoreLine(loadServiceConfig({ DATA_DIR: dataDir, DATABASE_URL: 'postgres://u@127.0.0.1:/db' }, false))).toBe(
      `store: PostgreSQL 127.0.0.1:5432/db (DATABASE_URL); read models in ${dataDir}`,
    );
    // where it points, never who connects nor with what password
    const line = startupStoreLine(
      loadServiceConfig({ DATA_DIR: dataDir, DATABASE_URL: 'postgresql://svc:s3cret@db.internal:6543/my%20events?sslmode=require' }, false),
    );
    expect(line).toBe(`store: PostgreSQL db.internal:6543/my events (DATABASE_URL); read models in ${dataDir}`);
    expect(startupStoreLine(loadServiceConfig({ DATA_DIR: dataDir, DATABASE_URL: 'postgres:///events?host=/var/run/postgresql' }, false))).toBe(
      `store: PostgreSQL /var/run/postgresql/events (DATABASE_URL); read models in ${dataDir}`,
    );
  });

  it('prints URLs a browser or curl takes: an IPv6 HOST in brackets, all interfaces (0.0.0.0, ::) as localhost', () => {
    const cases: Array<[string, string]> = [
      ['127.0.0.1', 'http://127.0.0.1:7373'],
      ['::1', 'http://[::1]:7373'],
      ['0.0.0.0', 'http://localhost:7373'],
      ['::', 'http://localhost:7373'],
      ['0:0:0:0:0:0:0:0', 'http://localhost:7373'],
      ['my-host', 'http://my-host:7373'],
    ];
    for (const [host, url] of cases) {
      expect(startupUrl(host, 7373)).toBe(url);
      expect(new URL(`${startupUrl(host, 7373)}/docs`).port).toBe('7373');
    }
  });
});
