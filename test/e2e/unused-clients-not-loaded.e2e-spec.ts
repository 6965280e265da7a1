/**
 * Issue 14 (memory of the empty service): the service started without NATS_URL, DATABASE_URL,
 * KURRENTDB_CONNECTION_STRING or a model summarizer never loads the NATS client, `pg`, the KurrentDB
 * client or the `openai` client, from its start through an append and reads.
 * The process lists the packages it loaded on SIGUSR2 (test/support/loaded-packages.js).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT, call, spawnService } from '../support/service-process';

jest.setTimeout(180_000);

const PRELOAD = path.join(REPO_ROOT, 'test', 'support', 'loaded-packages.js');

describe('a service without NATS, PostgreSQL, KurrentDB or a model', () => {
  let dataDir: string;
  beforeEach(() => (dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'unused-clients-'))));
  afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('loads none of their client packages', async () => {
    const nodeOptions = [process.env.NODE_OPTIONS, `--require ${JSON.stringify(PRELOAD)}`].filter(Boolean).join(' ');
    const svc = await spawnService({ dataDir, env: { NODE_OPTIONS: nodeOptions } });
    try {
      expect((await call(svc.url, 'GET', '/health')).status).toBe(200);
      const append = await call(svc.url, 'POST', '/v1/sessions/s1/events', {
        events: [{ id: 'e1', type: 'user', text: 'hello' }],
      });
      expect(append.status).toBeLessThan(300);
      expect((await call(svc.url, 'GET', '/v1/sessions/s1/window')).status).toBe(200);
      process.kill(svc.pid, 'SIGUSR2');
      for (let i = 0; i < 500 && !/^loaded packages: /m.test(svc.stderr()); i++) await new Promise((r) => setTimeout(r, 20));
    } finally {
      await svc.stop();
    }
    const line = /^loaded packages: (.*)$/m.exec(svc.stderr());
    expect(line).not.toBeNull();
    const packages = JSON.parse(line![1]) as string[];
    // The listing itself works: the packages the service does use are in it.
    expect(packages).toEqual(expect.arrayContaining(['better-sqlite3', 'fastify', 'gpt-tokenizer']));
    const unused = packages.filter((name) => /^@nats-io\//.test(name) || ['pg', '@kurrent/kurrentdb-client', 'openai'].includes(name));
    expect(unused).toEqual([]);
  });
});
