/**
 * Crashes (issue 7 item 1): a real service process on a temporary directory is killed with SIGKILL
 * during a burst of appends, during a compaction whose summarizer is slow (a local fake OpenAI
 * endpoint that never answers), and during projection catch-up; then restarted on the same
 * directory. Every acknowledged append is present, a compaction's decision events are all there or
 * none, and the read models resume and equal a rebuild from the log. An upgrade's rebuild of the
 * read models killed half-way is finished at the next start, which says so and logs its end.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { SessionEvent } from '@lib/compaction';
import Database from 'better-sqlite3';
import { READ_MODEL_FILE_NAME, READ_MODEL_SCHEMA_VERSION, ReadModelStore, SESSION_PROJECTOR_NAME } from '@lib/session';
import { call, spawnService, startServiceProcess, type ServiceProcess } from '../support/service-process';
import { appendDirect, decisionProblems, dumpAndRebuild, openStore, streamOf } from '../support/log-checks';
import { FakeOpenAiServer } from '../support/fake-openai-server';

jest.setTimeout(300_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `check` is true; throws after `limit` attempts (a bound, not a timing assertion). */
async function until(check: () => Promise<boolean> | boolean, what: string, limit = 1200, everyMs = 50): Promise<void> {
  for (let i = 0; i < limit; i++) {
    if (await check()) return;
    await sleep(everyMs);
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** Waits until the service's projector has applied everything in the store. */
async function caughtUp(svc: ServiceProcess): Promise<void> {
  await until(async () => {
    const h = await call(svc.url, 'GET', '/health');
    return h.status === 200 && h.body.projector.lag === 'caught-up';
  }, 'the projector to catch up');
}

/** Every event id in a session's full log (paged). */
async function logIds(svc: ServiceProcess, sessionId: string): Promise<string[]> {
  const ids: string[] = [];
  let from = 0n;
  for (;;) {
    const page = await call(svc.url, 'GET', `/v1/sessions/${sessionId}/events?fromRevision=${from}&limit=1000`);
    expect(page.status).toBe(200);
    const events = page.body.events as Array<{ eventId?: string; kind?: string; revision: string }>;
    for (const e of events) if (e.eventId && e.kind && e.kind !== 'summary') ids.push(e.eventId);
    if (events.length < 1000) return ids;
    from = BigInt(events[events.length - 1].revision) + 1n;
  }
}

function turn(prefix: string, n: number): SessionEvent[] {
  return [
    { id: `${prefix}-u${n}`, type: 'user', text: `question ${n} of ${prefix}: change booking ${prefix.toUpperCase()}${n}` },
    { id: `${prefix}-a${n}`, type: 'assistant', text: `answer ${n} of ${prefix}` },
  ];
}

function conversation(prefix: string, turns: number): SessionEvent[] {
  return Array.from({ length: turns }, (_, n) => turn(prefix, n)).flat();
}

describe('crash recovery (SIGKILL of a real service process)', () => {
  const dirs: string[] = [];
  const running: ServiceProcess[] = [];
  const servers: FakeOpenAiServer[] = [];

  function tempDir(): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'crash-'));
    dirs.push(dir);
    return dir;
  }
  async function start(dataDir: string, env: Record<string, string> = {}): Promise<ServiceProcess> {
    const svc = await spawnService({ dataDir, env });
    running.push(svc);
    return svc;
  }

  afterAll(async () => {
    for (const svc of running) await svc.kill();
    for (const s of servers) await s.close();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every acknowledged append of a burst, and applies each request whole or not at all', async () => {
    const dataDir = tempDir();
    const svc = await start(dataDir);
    const acked = new Map<string, string[]>(); // session → acknowledged ids
    const sent: Array<{ session: string; ids: string[] }> = [];
    let ackCount = 0;
    let killed: Promise<void> | null = null;
    const sessions = ['burst-a', 'burst-b', 'burst-c'];
    const worker = async (w: number) => {
      for (let n = 0; ; n++) {
        const session = sessions[(w + n) % sessions.length];
        const events = turn(`w${w}`, n).slice(0, 1 + (n % 2)); // 1 or 2 events per request
        const ids = events.map((e) => e.id);
        sent.push({ session, ids });
        try {
          const res = await call(svc.url, 'POST', `/v1/sessions/${session}/events`, { events });
          if (res.status !== 201) throw new Error(`append answered ${res.status}: ${JSON.stringify(res.body)}`);
          acked.set(session, [...(acked.get(session) ?? []), ...ids]);
          if (++ackCount === 150) killed = svc.kill();
        } catch (err) {
          if (killed) return; // the process is gone: this request was never acknowledged
          throw err;
        }
      }
    };
    await Promise.all([0, 1, 2, 3, 4, 5].map(worker));
    await (killed as Promise<void> | null); // assigned inside a worker above
    expect(ackCount).toBeGreaterThanOrEqual(150);

    const again = await start(dataDir);
    await caughtUp(again);
    for (const session of sessions) {
      const present = new Set(await logIds(again, session));
      for (const id of acked.get(session) ?? []) expect(present.has(id) ? id : `missing ${id}`).toBe(id);
      // atomic requests: all events of one request or none of them
      for (const req of sent.filter((r) => r.session === session)) {
        const found = req.ids.filter((id) => present.has(id)).length;
        expect([0, req.ids.length]).toContain(found);
      }
      // the window (no compaction yet) holds them too
      const window = await call(again.url, 'GET', `/v1/sessions/${session}/window`);
      expect(window.status).toBe(200);
      const windowIds = new Set((window.body.events as Array<{ id: string }>).map((e) => e.id));
      for (const id of acked.get(session) ?? []) expect(windowIds.has(id)).toBe(true);
    }
    // the service keeps working on the recovered log
    expect((await call(again.url, 'POST', '/v1/sessions/burst-a/events', { events: [{ id: 'after-crash', type: 'user', text: 'still here?' }] })).status).toBe(
      201,
    );
    await caughtUp(again);
    await again.stop();
    const { onDisk, rebuilt } = await dumpAndRebuild(dataDir);
    expect(onDisk).toEqual(rebuilt);
  });

  it('leaves no half-applied compaction when killed while the summarizer is slow, and compacts after restart', async () => {
    const dataDir = tempDir();
    const fake = new FakeOpenAiServer({ defaultBehaviour: { fault: 'timeout' } });
    servers.push(fake);
    await fake.start();
    const env = { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-crash-test-key', SUMMARIZER_TIMEOUT_MS: '120000', SUMMARIZER_MAX_RETRIES: '0' };
    const svc = await start(dataDir, env);
    const ackedIds: string[] = [];
    const first = await call(svc.url, 'POST', '/v1/sessions/slow/events', { events: conversation('slow', 10) });
    expect(first.status).toBe(201);
    ackedIds.push(...conversation('slow', 10).map((e) => e.id));

    const pending = call(svc.url, 'POST', '/v1/sessions/slow/compactions', {
      strategy: { type: 'recursive-summarization', maxEventsToKeep: 4, overlapSize: 1 },
    }).catch((err: Error) => ({ status: -1, body: err.name }));
    await until(() => fake.calls >= 1, 'the summarizer call to reach the fake endpoint');
    // appends never wait for a compaction in flight
    for (let n = 10; n < 13; n++) {
      const res = await call(svc.url, 'POST', '/v1/sessions/slow/events', { events: turn('slow', n) });
      expect(res.status).toBe(201);
      ackedIds.push(...turn('slow', n).map((e) => e.id));
    }
    await svc.kill();
    expect((await pending).status).toBe(-1); // never answered

    const store = openStore(dataDir);
    const log = await store.readStream(streamOf('slow'));
    await store.close();
    const { problems, compactionIds } = decisionProblems(log);
    expect(problems).toEqual([]);
    expect(compactionIds).toEqual([]); // the pass never reached its append: none of its events

    fake.setDefault('SUMMARY: the user changed several bookings.');
    const again = await start(dataDir, env);
    await caughtUp(again);
    const present = new Set(await logIds(again, 'slow'));
    for (const id of ackedIds) expect(present.has(id)).toBe(true);
    const done = await call(again.url, 'POST', '/v1/sessions/slow/compactions', {
      strategy: { type: 'recursive-summarization', maxEventsToKeep: 4, overlapSize: 1 },
    });
    expect(done.status).toBe(200);
    expect(done.body.outcome).toBe('compacted');
    await again.stop();
    const { onDisk, rebuilt } = await dumpAndRebuild(dataDir);
    expect(onDisk).toEqual(rebuilt);
  });

  it('writes each compaction whole or not at all when killed among many compactions and appends', async () => {
    const dataDir = tempDir();
    const fake = new FakeOpenAiServer({ defaultBehaviour: 'SUMMARY: bookings discussed.' });
    servers.push(fake);
    await fake.start();
    const env = { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-crash-test-key', SUMMARIZER_MAX_RETRIES: '0' };
    const svc = await start(dataDir, env);
    const sessions = ['many-a', 'many-b', 'many-c', 'many-d'];
    for (const s of sessions) expect((await call(svc.url, 'POST', `/v1/sessions/${s}/events`, { events: conversation(s, 6) })).status).toBe(201);
    const answered: Array<{ session: string; compactionId: string }> = [];
    const acked = new Map<string, string[]>();
    let killed: Promise<void> | null = null;
    let compactions = 0;
    const compactor = async (s: string) => {
      for (let n = 0; ; n++) {
        try {
          const strategy = n % 2 === 0 ? { type: 'recursive-summarization', maxEventsToKeep: 4, overlapSize: 1 } : { type: 'sliding-window', maxEvents: 3 };
          const res = await call(svc.url, 'POST', `/v1/sessions/${s}/compactions`, { strategy });
          expect(res.status).toBe(200);
          if (res.body.outcome === 'compacted' && !res.body.replayed) answered.push({ session: s, compactionId: res.body.compactionId });
          if (++compactions === 12) killed = svc.kill();
        } catch (err) {
          if (killed) return;
          throw err;
        }
      }
    };
    const appender = async (s: string) => {
      for (let n = 6; ; n++) {
        try {
          const res = await call(svc.url, 'POST', `/v1/sessions/${s}/events`, { events: turn(s, n) });
          expect(res.status).toBe(201);
          acked.set(s, [...(acked.get(s) ?? []), ...turn(s, n).map((e) => e.id)]);
        } catch (err) {
          if (killed) return;
          throw err;
        }
      }
    };
    await Promise.all(sessions.flatMap((s) => [compactor(s), appender(s)]));
    await (killed as Promise<void> | null); // assigned inside a worker above

    const store = openStore(dataDir);
    for (const s of sessions) {
      const log = await store.readStream(streamOf(s));
      const { problems, compactionIds } = decisionProblems(log);
      expect(problems).toEqual([]);
      // an acknowledged compaction is in the log
      for (const a of answered.filter((x) => x.session === s)) expect(compactionIds).toContain(a.compactionId);
    }
    await store.close();

    const again = await start(dataDir, env);
    await caughtUp(again);
    for (const s of sessions) {
      const present = new Set(await logIds(again, s));
      for (const id of [...conversation(s, 6).map((e) => e.id), ...(acked.get(s) ?? [])]) expect(present.has(id)).toBe(true);
    }
    await again.stop();
    const { onDisk, rebuilt } = await dumpAndRebuild(dataDir);
    expect(onDisk).toEqual(rebuilt);
  });

  it('resumes projection after being killed during catch-up, and the read models equal a rebuild', async () => {
    const dataDir = tempDir();
    const svc = await start(dataDir);
    expect((await call(svc.url, 'POST', '/v1/sessions/catch-0/events', { events: conversation('catch-0', 5) })).status).toBe(201);
    expect((await call(svc.url, 'POST', '/v1/sessions/catch-0/compactions', { strategy: { type: 'turn-window', maxTurns: 2 } })).status).toBe(200);
    await caughtUp(svc);
    await svc.kill();

    // Many events the read models have not seen: the next process starts far behind.
    const store = openStore(dataDir);
    const sessions = Array.from({ length: 60 }, (_, i) => `catch-${i + 1}`);
    for (const s of sessions) await appendDirect(store, s, conversation(s, 100)); // 200 events each
    const head = await store.headPosition();
    await store.close();

    // Killed as soon as the projector has applied part of the backlog (it is catching up), twice.
    const readModels = new Database(path.join(dataDir, READ_MODEL_FILE_NAME), { readonly: true });
    const checkpoint = () => {
      const row = readModels.prepare('SELECT position FROM projector_checkpoints WHERE projector = ?').safeIntegers(true).get(SESSION_PROJECTOR_NAME) as
        { position: bigint } | undefined;
      return row?.position ?? 0n;
    };
    const killPoints: bigint[] = [];
    try {
      for (let round = 0; round < 2; round++) {
        const before = checkpoint();
        const starting = startServiceProcess({ dataDir });
        starting.ready.catch(() => undefined); // killed before or after it is ready: either is fine
        await until(() => checkpoint() > before, 'the projector to apply a first batch', 6000, 2);
        await starting.kill();
        killPoints.push(checkpoint());
      }
    } finally {
      readModels.close();
    }
    process.stderr.write(`projection catch-up kill points (checkpoint of ${head}): ${killPoints.join(', ')}\n`);
    // the first kill landed in the middle of the catch-up
    expect(killPoints[0]).toBeLessThan(head);

    const again = await start(dataDir);
    await caughtUp(again);
    for (const s of ['catch-1', 'catch-30', 'catch-60']) expect(await logIds(again, s)).toEqual(conversation(s, 100).map((e) => e.id));
    const window = await call(again.url, 'GET', '/v1/sessions/catch-0/window');
    expect(window.status).toBe(200);
    await again.stop();
    const { onDisk, rebuilt } = await dumpAndRebuild(dataDir);
    expect(onDisk).toEqual(rebuilt);
  });

  // Newcomer ncsre: the restart after a rebuild killed half-way finished it without a word.
  it("finishes an upgrade's rebuild killed half-way, saying so at the restart and logging its end", async () => {
    const dataDir = tempDir();
    const store = openStore(dataDir);
    for (let i = 0; i < 60; i++) await appendDirect(store, `rebuild-${i}`, conversation(`rebuild-${i}`, 100)); // 200 events each
    const head = await store.headPosition();
    await store.close();
    const file = path.join(dataDir, READ_MODEL_FILE_NAME);
    ReadModelStore.open(file).close();
    const older = new Database(file);
    older.pragma(`user_version = ${READ_MODEL_SCHEMA_VERSION - 1}`); // read models of the previous version: the start rebuilds them
    older.close();
    const checkpoint = () => {
      const db = new Database(file, { readonly: true });
      try {
        const row = db.prepare('SELECT position FROM projector_checkpoints WHERE projector = ?').safeIntegers(true).get(SESSION_PROJECTOR_NAME) as
          { position: bigint } | undefined;
        return row?.position ?? 0n;
      } catch {
        return 0n; // the tables are being recreated
      } finally {
        db.close();
      }
    };

    const info = { LOG_LEVEL: 'info' };
    const starting = startServiceProcess({ dataDir, env: info });
    starting.ready.catch(() => undefined);
    await until(() => checkpoint() > 0n, 'the rebuild to apply a first batch', 6000, 2);
    await starting.kill();
    const killedAt = checkpoint();
    // (not asserted on the killed process's output: what it logged last may still be buffered when SIGKILL lands)
    expect(killedAt).toBeLessThan(head);

    const again = await start(dataDir, info);
    await caughtUp(again);
    await again.stop();
    const lines = again.stdout();
    expect(lines).toMatch(
      new RegExp(
        `the read models are rebuilt from the log, finishing a rebuild that was interrupted \\(it started at [^:]+:[^:]+:[^:]+: .*held version ${READ_MODEL_SCHEMA_VERSION - 1}, this release's read models are version ${READ_MODEL_SCHEMA_VERSION}; the process stopped during it\\): .*resumes at position ${killedAt}`,
      ),
    );
    expect(lines).toMatch(new RegExp(`the read models are rebuilt: ${head - killedAt} events applied, up to position ${head}, in \\d+\\.\\d s`));
    const { onDisk, rebuilt } = await dumpAndRebuild(dataDir);
    expect(onDisk).toEqual(rebuilt);
  });
});
