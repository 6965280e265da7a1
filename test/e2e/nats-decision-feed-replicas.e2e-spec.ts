/**
 * The decisions feed of a replica that (re)starts while other replicas publish (newcomer ncops: a
 * routine rolling restart of 3 replicas on one PostgreSQL log warned, 2 restarts in 8, that "the
 * store was restored from a backup", and `/health` `nats.decisionFeed.anotherLog` stayed set until
 * the process stopped). The feed read the store's head, then the decisions stream: a decision
 * another replica published in between was past that head, taken for another log's. A message is
 * another log's only when it is past a head read after it was (or its event is not the log's).
 *
 * Two {@link DecisionFeedPublisher}s follow one SQLite log against the machine's NATS server,
 * each with its own read-model file for its checkpoint: B publishes; A's store, the first time A
 * reads the head, lets B publish a newer decision before it answers (the race, made certain). The
 * decisions stream's duplicate window is shortened to 200 ms so that a copy published again after
 * it shows. Each test has its own prefix and streams. Runtime ≈ 3 s.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { nanos } from '@nats-io/transport-node';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { SqliteEventStore } from '@lib/event-store';
import { COMPACTION_COMPLETED, ReadModelStore, sessionKey } from '@lib/session';
import { deleteStreams, describeWithNats, eventually, uniquePrefix, useNatsSuite } from '../support/nats-test';
import { ReplicaLink } from '../support/nats-replica-link';
import { DecisionFeedPublisher, LOG_POSITION_HEADER } from '../../apps/session-service/src/nats/decision-feed-publisher';
import { DUPLICATE_WINDOW_MS as PRODUCTION_DUPLICATE_WINDOW_MS, ensureStreams } from '../../apps/session-service/src/nats/nats-streams';
import { natsNames, type NatsNames } from '../../apps/session-service/src/nats/nats-names';

jest.setTimeout(60_000);

const DUPLICATE_WINDOW_MS = 200;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describeWithNats('NATS decision feed replicas')('a decisions feed (re)starting while another replica publishes', () => {
  let root: string;
  let names: NatsNames;
  let store: SqliteEventStore;
  let readModels: ReadModelStore[];
  let feeds: DecisionFeedPublisher[];
  let warn: jest.SpyInstance;

  const nats = useNatsSuite('NATS decision feed replicas');

  afterAll(() => nats.close());

  beforeEach(async () => {
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    names = natsNames(uniquePrefix());
    await ensureStreams(nats.client.jsm, names, 5000);
    await nats.client.jsm.streams.update(names.decisionStream, { duplicate_window: nanos(DUPLICATE_WINDOW_MS) });
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'nats-feed-replicas-'));
    store = SqliteEventStore.open(path.join(root, 'events.sqlite'));
    readModels = [];
    feeds = [];
  });

  afterEach(async () => {
    await Promise.all(feeds.map((f) => f.stop()));
    await store.close();
    for (const r of readModels) r.db.close();
    await deleteStreams(nats.client.jsm, names.prefix);
    fs.rmSync(root, { recursive: true, force: true });
    jest.restoreAllMocks();
  });

  /**
   * A feed named `name` on `log` (the shared store, or a view of it), with its own checkpoint file.
   */
  const feed = (name: string, log: SqliteEventStore, js: JetStreamClient = nats.client.js, jsm: JetStreamManager = nats.client.jsm): DecisionFeedPublisher => {
    const readModel = ReadModelStore.open(path.join(root, `${name}.sqlite`));
    readModels.push(readModel);
    const publisher = new DecisionFeedPublisher(log, readModel, nats.nc, js, jsm, names);
    feeds.push(publisher);
    return publisher;
  };

  /**
   * The shared store as one replica sees it: once `armed()` says so, its next `headPosition()`
   * reads the head, then runs `meanwhile` (another replica publishes) before it answers with the
   * head it read.
   */
  const headThenMeanwhile = (armed: () => boolean, meanwhile: () => Promise<void>): SqliteEventStore => {
    let done = false;
    return Object.assign(Object.create(store) as SqliteEventStore, {
      headPosition: async () => {
        const head = await store.headPosition();
        if (!done && armed()) {
          done = true;
          await meanwhile();
        }
        return head;
      },
    });
  };

  /** Appends a conversation event and a `CompactionCompleted` of `session`; returns the decision's position. */
  const decide = async (session: string): Promise<bigint> => {
    const metadata = { tenantId: 'default', sessionId: session };
    const result = await store.appendToStream(`session-${sessionKey('default', session)}`, [
      { id: randomUUID(), type: 'ConversationEventAppended', data: { text: 'hello' }, metadata },
      { id: randomUUID(), type: COMPACTION_COMPLETED, data: { compactionId: randomUUID() }, metadata },
    ]);
    return result.position;
  };

  /** The `Log-Position` of every message in the decisions stream, in stream order. */
  const streamPositions = async (): Promise<string[]> => {
    const info = await nats.client.jsm.streams.info(names.decisionStream);
    const out: string[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
      const m = await nats.client.jsm.streams.getMessage(names.decisionStream, { seq });
      if (m) out.push(m.header?.get(LOG_POSITION_HEADER) ?? `no position (seq ${seq})`);
    }
    return out;
  };

  const reaches = async (f: DecisionFeedPublisher, position: bigint, what: string) =>
    eventually(() => f.state().checkpoint === position && f.state().lastError === null, 20_000, what);
  const feedWarnings = () => warn.mock.calls.map(([line]) => String(line)).filter((line) => line.startsWith('decision feed: '));

  it('at start: a decision another replica publishes after the head was read is this log’s (no warning, no anotherLog), and the feed goes on from it', async () => {
    // A resumes after the stream's last message as it read it before B's newer one, so it publishes that one again, a copy
    // JetStream drops by its Nats-Msg-Id within the duplicate window: a window of its production size here (the 200 ms one
    // let a copy through once under a loaded CI machine, A publishing it over 200 ms after B).
    await nats.client.jsm.streams.update(names.decisionStream, { duplicate_window: nanos(PRODUCTION_DUPLICATE_WINDOW_MS) });
    const first = await decide('s1');
    const b = feed('b', store);
    await b.start();
    await reaches(b, first, 'feed B to publish the first decision');

    // A restarts: it reads the head; before it reads the stream, B publishes a newer decision.
    let newer = 0n;
    const a = feed(
      'a',
      headThenMeanwhile(
        () => true,
        async () => {
          newer = await decide('s2');
          await reaches(b, newer, 'feed B to publish the newer decision');
        },
      ),
    );
    await a.start();
    expect(newer).toBeGreaterThan(first);
    expect(a.state().anotherLog).toBeNull();
    expect(feedWarnings()).toEqual([]);

    // A follows the log from there: what comes next is published once.
    await reaches(a, newer, 'feed A to reach the newer decision');
    await b.stop();
    const next = await decide('s1');
    await reaches(a, next, 'feed A to publish the next decision');
    expect(await streamPositions()).toEqual([first, newer, next].map(String));
    expect(a.state().anotherLog).toBeNull();
    expect(feedWarnings()).toEqual([]);
  });

  it('resuming after a pause: a decision another replica published after the head was read is passed, not published again past the duplicate window', async () => {
    const link = new ReplicaLink(nats.client);
    let resuming = false;
    let newer = 0n;
    const b = feed('b', store);
    const a = feed(
      'a',
      // The first head read once the link is back: B publishes a newer decision, and JetStream forgets its id, before A reads the stream.
      headThenMeanwhile(
        () => resuming,
        async () => {
          link.down = false;
          newer = await decide('s3');
          await reaches(b, newer, 'feed B to publish the newer decision');
          await sleep(DUPLICATE_WINDOW_MS * 5);
        },
      ),
      link.js(),
      link.jsm(),
    );
    await a.start();
    link.down = true;
    const paused = await decide('s1');
    await eventually(() => a.state().lastError !== null, 10_000, 'feed A to pause');
    await b.start();
    await reaches(b, paused, 'feed B to publish the decision A could not');

    resuming = true;
    await eventually(() => newer > 0n, 20_000, 'feed A to read the head once the link is back');
    await reaches(a, newer, 'feed A to resume and reach the newer decision');
    expect(await streamPositions()).toEqual([paused, newer].map(String));
    expect(a.state().anotherLog).toBeNull();
    expect(feedWarnings()).toEqual([]);
  });
});
