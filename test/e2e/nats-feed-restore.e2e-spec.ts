/**
 * The decisions feed on a store that holds another log than the one its stream's messages came
 * from (newcomer ncgdpr): a store restored from an older backup (README "Backup and restore", done
 * literally), or another store (SQLite → PostgreSQL) on the same `NATS_PREFIX`. The feed started
 * after the last position in the decisions stream, past the new log's head, so it skipped every
 * new event below it: no decision was published, and an erasure was never handled, so the erased
 * session's compaction answer (its summary text) stayed in the results stream. It must resume at
 * the last message of this log (here: the log's head, none is), say so (`/health`
 * `decisionFeed.anotherLog`), publish every later decision — with a message id of its own, not the
 * other log's at the same position — and handle every erasure, deleting the session's answers
 * and decisions published before the restore too.
 *
 * Against the machine's NATS server, each test under its own prefix (skipped with one line
 * without one; CI runs it); the store switch also needs PostgreSQL (skipped with one line without
 * it; CI runs it). Runtime ≈ 10 s.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { Logger } from '@nestjs/common';
import { SqliteEventStore, type SubscribeOptions, type Subscription } from '@lib/event-store';
import { COMPACTION_COMPLETED, READ_MODEL_FILE_NAME, ReadModelStore, sessionKey } from '@lib/session';
import { createTestDatabase, postgresUnavailableReason, type TestDatabase } from '../../libs/event-store/test/postgres-test-database';
import { ControlledSummarizer, startService, type Harness } from '../support/service-harness';
import { NATS_TEST_URL, describeWithNats, eventually, publishCommand, readStream, useNatsSuite } from '../support/nats-test';
import { DecisionFeedPublisher, LOG_POSITION_HEADER } from '../../apps/session-service/src/nats/decision-feed-publisher';
import { ensureStreams } from '../../apps/session-service/src/nats/nats-streams';
import { commandSubject, natsNames, type NatsNames } from '../../apps/session-service/src/nats/nats-names';

jest.setTimeout(120_000);

/** One message of a stream, read back by sequence. */
interface Stored {
  subject: string;
  position: string | null;
  msgId: string | null;
  text: string;
}

const pgSkip = postgresUnavailableReason();
if (pgSkip) process.stderr.write(`SKIPPED NATS feed after a store switch: ${pgSkip}\n`);

describeWithNats('NATS decisions feed after a restore')('the decisions feed on a store restored from a backup, or another store', () => {
  let root: string;
  const summarizer = new ControlledSummarizer((r) => `SUMMARY: ${r.toSummarize.join(' | ')}`);

  const nats = useNatsSuite('NATS decisions feed after a restore');
  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'nats-feed-restore-'));
  });

  afterAll(async () => {
    await nats.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const newNames = (): NatsNames => natsNames(nats.prefix());
  const envOf = (names: NatsNames, more: Record<string, string> = {}) => ({
    NATS_URL: NATS_TEST_URL,
    NATS_PREFIX: names.prefix,
    NATS_ACK_WAIT_MS: '5000',
    ...more,
  });

  /** Every message of `stream`, in stream order. */
  const everyMessage = async (stream: string): Promise<Stored[]> => {
    const info = await nats.client.jsm.streams.info(stream);
    const out: Stored[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
      const m = await nats.client.jsm.streams.getMessage(stream, { seq });
      if (m)
        out.push({ subject: m.subject, position: m.header?.get(LOG_POSITION_HEADER) || null, msgId: m.header?.get('Nats-Msg-Id') || null, text: m.string() });
    }
    return out;
  };
  /** The decisions stream as `<type> <session> @<position>` lines. */
  const feed = async (names: NatsNames): Promise<string[]> =>
    (await everyMessage(names.decisionStream)).map((m) => {
      const body = JSON.parse(m.text) as { type: string; sessionId: string };
      return `${body.type} ${body.sessionId} @${m.position}`;
    });

  /** Appends a conversation of four turns mentioning `word` to `session`; returns the append's position. */
  const converse = async (h: Harness, session: string, word: string): Promise<bigint> => {
    const messages = Array.from({ length: 4 }, (_, i) => [
      { role: 'user', content: `turn ${i}: the code word is ${word}` },
      { role: 'assistant', content: `noted ${i}` },
    ]).flat();
    return BigInt((await h.http().post(`/v1/sessions/${session}/messages`).send({ messages }).expect(201)).body.position);
  };
  /** Compacts `session` over HTTP (sliding window); returns the decision's position. */
  const compactOverHttp = async (h: Harness, session: string): Promise<bigint> =>
    BigInt(
      (
        await h
          .http()
          .post(`/v1/sessions/${session}/compactions`)
          .send({ strategy: { type: 'sliding-window', maxEvents: 2 } })
          .expect(200)
      ).body.position,
    );
  /**
   * Compacts `session` over NATS (a rolling summary: its answer on the results stream holds the
   * conversation's text); returns the answer, the `nth` on the session's results subject.
   */
  const compactOverNats = async (names: NatsNames, session: string, nth = 1): Promise<{ summary: { text: string }; position: string }> => {
    const compact = { strategy: { type: 'rolling-summary', keepTurns: 1, summarizeAtTokens: 1 } };
    await publishCommand(nats.client.js, commandSubject(names.prefix, 'default', session, 'compact'), compact, { msgId: randomUUID() });
    const answers = await readStream(nats.client, names.resultStream, `${names.prefix}.results.default.${session}`, nth);
    expect(answers.map((a) => a.headers.Status)).toEqual(Array.from({ length: nth }, () => '200'));
    return answers[nth - 1].body;
  };
  const health = async (h: Harness) => (await h.http().get('/health').expect(200)).body;
  const feedCaughtUp = (h: Harness) =>
    eventually(
      async () => {
        const body = await health(h);
        const feed = body.nats.decisionFeed;
        return feed !== null && BigInt(feed.checkpoint) >= BigInt(body.store.headPosition) && feed.lastError === null;
      },
      20_000,
      'the decisions feed to reach the log’s head',
    );

  it('SQLite restored from an older backup: publishes every new decision and erasure, and the erasure deletes the answers published before the restore', async () => {
    const names = newNames();
    const dataDir = path.join(root, 'restore');
    fs.mkdirSync(dataDir);
    const secret = `zq-restore-${randomUUID().slice(0, 8)}`;
    const before = await startService({ dataDir, env: envOf(names), summarizer });
    const head = await converse(before, 'kept', secret); // in the backup: the restored log's head
    const source = new Database(path.join(dataDir, 'events.sqlite'), { readonly: true });
    source.exec(`VACUUM INTO '${path.join(root, 'backup.sqlite')}'`); // the backup, as README says
    source.close();
    // After the backup (the log the restore loses): kept compacted over NATS (its answers hold the secret), twice, another session compacted.
    const keptAnswer = await compactOverNats(names, 'kept');
    expect(keptAnswer.summary.text).toContain(secret);
    for (let i = 0; i < 3; i++) await converse(before, 'lost', 'gone');
    const lostDecision = await compactOverHttp(before, 'lost');
    await converse(before, 'kept', `${secret} again`);
    const keptLater = await compactOverNats(names, 'kept', 2);
    expect(keptLater.summary.text).toContain(secret);
    await feedCaughtUp(before);
    await before.stop();
    expect(await feed(names)).toEqual([
      `CompactionCompleted kept @${keptAnswer.position}`,
      `CompactionCompleted lost @${lostDecision}`,
      `CompactionCompleted kept @${keptLater.position}`,
    ]);

    // The restore, as README says: replace events.sqlite, delete its -wal and -shm, delete the read models.
    for (const f of fs.readdirSync(dataDir)) if (f.startsWith('events.sqlite') || f.startsWith(READ_MODEL_FILE_NAME)) fs.rmSync(path.join(dataDir, f));
    fs.copyFileSync(path.join(root, 'backup.sqlite'), path.join(dataDir, 'events.sqlite'));
    const after = await startService({ dataDir, env: envOf(names), summarizer });
    try {
      const started = await health(after);
      expect(started.store.headPosition).toBe(String(head));
      expect(started.nats.decisionFeed).toMatchObject({
        checkpoint: String(head),
        anotherLog: { foundPosition: keptLater.position, headPosition: String(head), resumedAfter: String(head) },
      });
      expect(started.nats.decisionFeed.anotherLog.problem).toMatch(
        new RegExp(
          `^decision feed: the last message in ${names.decisionStream} is at position ${keptLater.position}, past the end of the event store's log \\(${head}\\): ` +
            `the store was restored from a backup, or is another store on the same NATS_PREFIX; it resumes after position ${head} \\(the log's head: no message in the stream is of this log`,
        ),
      );

      // kept is compacted again, as in the lost log: its decision takes the position the lost log's had, and is published (a message id of its own).
      const again = BigInt((await compactOverNats(names, 'kept', 3)).position);
      expect(again).toBe(BigInt(keptAnswer.position));
      await feedCaughtUp(after);
      const both = (await everyMessage(names.decisionStream)).filter((m) => m.position === String(again));
      expect(both).toHaveLength(2);
      expect(both[0].msgId).not.toBe(both[1].msgId);

      // The erasure is handled: the answers published before the restore go, and every decision of kept, of both logs
      // (the lost log's second one is at a position after the erasure record's).
      const erasure = BigInt((await after.http().delete('/v1/sessions/kept').expect(200)).body.position);
      expect(erasure).toBeLessThan(BigInt(keptLater.position));
      await eventually(async () => (await feed(names)).includes(`SessionErased kept @${erasure}`), 20_000, 'the erasure record on the feed');
      expect(await feed(names)).toEqual([`CompactionCompleted lost @${lostDecision}`, `SessionErased kept @${erasure}`]);
      expect((await everyMessage(names.resultStream)).filter((m) => m.text.includes(secret))).toEqual([]);

      // And what comes next.
      await converse(after, 'fresh', 'new');
      const fresh = await compactOverHttp(after, 'fresh');
      expect(fresh).toBeLessThan(lostDecision);
      await feedCaughtUp(after);
      expect(await feed(names)).toEqual([`CompactionCompleted lost @${lostDecision}`, `SessionErased kept @${erasure}`, `CompactionCompleted fresh @${fresh}`]);
    } finally {
      await after.stop();
    }

    // A restart on the restored log: the stream's last message is of this log now; nothing is noted.
    const restarted = await startService({ dataDir, env: envOf(names), summarizer });
    try {
      expect((await health(restarted)).nats.decisionFeed.anotherLog).toBeNull();
    } finally {
      await restarted.stop();
    }
  });

  (pgSkip ? it.skip : it)('SQLite, then PostgreSQL on the same NATS_PREFIX: publishes the new store’s decisions and handles its erasures', async () => {
    const names = newNames();
    let db: TestDatabase | null = null;
    const sqlite = await startService({ dataDir: path.join(root, 'sqlite'), env: envOf(names), summarizer });
    let last = 0n;
    for (const session of ['s1', 's2', 's3']) {
      await converse(sqlite, session, 'sqlite');
      last = await compactOverHttp(sqlite, session);
    }
    await feedCaughtUp(sqlite);
    await sqlite.stop();
    try {
      db = await createTestDatabase('feedswitch');
      const postgres = await startService({ dataDir: path.join(root, 'postgres'), env: envOf(names, { DATABASE_URL: db.url }), summarizer });
      try {
        expect((await health(postgres)).nats.decisionFeed).toMatchObject({
          checkpoint: '0',
          anotherLog: { foundPosition: String(last), headPosition: '0', resumedAfter: '0' },
        });
        const secret = `zq-switch-${randomUUID().slice(0, 8)}`;
        await converse(postgres, 'x', secret);
        const answer = await compactOverNats(names, 'x');
        expect(answer.summary.text).toContain(secret);
        expect(BigInt(answer.position)).toBeLessThan(last);
        await feedCaughtUp(postgres);
        expect(await feed(names)).toContain(`CompactionCompleted x @${answer.position}`);

        const erasure = BigInt((await postgres.http().delete('/v1/sessions/x').expect(200)).body.position);
        await eventually(async () => (await feed(names)).includes(`SessionErased x @${erasure}`), 20_000, 'the erasure record on the feed');
        expect((await feed(names)).filter((line) => line.includes(' x '))).toEqual([`SessionErased x @${erasure}`]);
        expect((await everyMessage(names.resultStream)).filter((m) => m.text.includes(secret))).toEqual([]);
      } finally {
        await postgres.stop();
      }
    } finally {
      await db?.drop();
    }
  });
});

describeWithNats('NATS decisions feed, store restored under it')('a decisions feed whose store is restored while it runs', () => {
  let root: string;
  let names: NatsNames;
  const closers: Array<() => unknown> = [];

  const nats = useNatsSuite('NATS decisions feed, store restored under it');
  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'nats-feed-restored-under-'));
    names = natsNames(nats.prefix());
    await ensureStreams(nats.client.jsm, names, 5000);
  });

  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    await nats.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  let warn: jest.SpyInstance;
  beforeEach(() => {
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  /** Appends a conversation event and a `CompactionCompleted` of `session` to `store`; returns the decision's position. */
  const decide = async (store: SqliteEventStore, session: string): Promise<bigint> => {
    const metadata = { tenantId: 'default', sessionId: session };
    const result = await store.appendToStream(`session-${sessionKey('default', session)}`, [
      { id: randomUUID(), type: 'ConversationEventAppended', data: { text: 'hello' }, metadata },
      { id: randomUUID(), type: COMPACTION_COMPLETED, data: { compactionId: randomUUID() }, metadata },
    ]);
    return result.position;
  };

  it('resumes after the last message of the restored log (not after its own checkpoint, past the restored head), and publishes what the restored log gets next', async () => {
    const original = SqliteEventStore.open(path.join(root, 'events.sqlite'));
    closers.push(() => original.close());
    const first = await decide(original, 's1');
    const source = new Database(path.join(root, 'events.sqlite'), { readonly: true });
    source.exec(`VACUUM INTO '${path.join(root, 'backup.sqlite')}'`); // the backup
    source.close();
    const lost = [await decide(original, 's2'), await decide(original, 's3')];

    // The feed follows whichever store `current` is; while `down`, every read fails (the database is being restored).
    let current: SqliteEventStore = original;
    let down = false;
    let wentDown: (error: Error) => void = () => undefined;
    const fail = () => Promise.reject(new Error('test: store down'));
    const switchable = new Proxy({} as SqliteEventStore, {
      get: (_, key) => {
        if (key === 'subscribeToAll')
          return (options?: SubscribeOptions): Subscription => {
            if (down) return { [Symbol.asyncIterator]: () => ({ next: fail }), close: async () => undefined };
            const live = current.subscribeToAll(options);
            const events = live[Symbol.asyncIterator]();
            const outage = new Promise<never>((_, reject) => (wentDown = reject));
            outage.catch(() => undefined);
            return { [Symbol.asyncIterator]: () => ({ next: () => Promise.race([events.next(), outage]) }), close: () => live.close() };
          };
        const value = Reflect.get(current, key, current) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => (down ? fail() : (value as (...a: unknown[]) => unknown).apply(current, args));
      },
    });
    const readModels = ReadModelStore.open(path.join(root, 'read-models.sqlite'));
    closers.push(() => readModels.close());
    const feed = new DecisionFeedPublisher(switchable, readModels, nats.nc, nats.client.js, nats.client.jsm, names);
    await feed.start();
    await eventually(() => feed.state().checkpoint === lost[1], 20_000, 'the feed to publish the original log');

    // The store goes down and comes back restored from the backup; another replica writes to it meanwhile.
    down = true;
    wentDown(new Error('test: store down'));
    await eventually(() => feed.state().lastError !== null, 10_000, 'the feed to pause');
    const restored = SqliteEventStore.open(path.join(root, 'backup.sqlite'));
    closers.push(() => restored.close());
    const next = await decide(restored, 's4');
    expect(next).toBe(lost[0]); // the position of a decision of the lost log
    current = restored;
    down = false;

    await eventually(() => feed.state().checkpoint === next && feed.state().lastError === null, 20_000, 'the feed to publish the restored log');
    await feed.stop();
    expect(feed.state().anotherLog).toMatchObject({ foundPosition: lost[1], resumedAfter: first });
    const lines = warn.mock.calls.map(([line]) => String(line)).filter((line) => line.startsWith('decision feed: '));
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(
          `its checkpoint \\(nats-decision-feed\\) is at position ${lost[1]}, past the end of the event store's log \\(${next}\\).*it resumes after position ${first} \\(the last message of this log in the stream\\)`,
        ),
      ),
    ]);
    const positions = await Promise.all(
      [1, 2, 3, 4].map(async (seq) => (await nats.client.jsm.streams.getMessage(names.decisionStream, { seq }))?.header.get(LOG_POSITION_HEADER)),
    );
    expect(positions).toEqual([first, ...lost, next].map(String));
  });
});
