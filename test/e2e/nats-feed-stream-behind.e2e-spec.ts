/**
 * The decisions feed restarting against a decisions stream behind its own checkpoint (newcomer
 * ncnats73 F1): replicas that ran on another NATS server for a while (and published there) and
 * came back, or a server whose store was restored from an older copy. The feed resumed after the
 * later of its checkpoint and the stream's last message of this log, so the decisions made
 * meanwhile never reached this stream, silently. It must resume after the stream's last message of
 * this log, publish what the stream lacks (in log order, once), and say so in one warn line; a
 * routine restart (checkpoint past the last decision only by other events) says nothing; an empty
 * stream under a checkpoint past 0 resumes after the checkpoint, with one warn line saying the
 * decisions up to it are not published again.
 *
 * One SQLite log and one read-model file (the replica's checkpoint), the machine's NATS server;
 * "another server" is another prefix (its own streams). Runtime ≈ 3 s.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { SqliteEventStore } from '@lib/event-store';
import { COMPACTION_COMPLETED, ReadModelStore, sessionKey } from '@lib/session';
import { describeWithNats, eventually, useNatsSuite } from '../support/nats-test';
import { DecisionFeedPublisher, LOG_POSITION_HEADER } from '../../apps/session-service/src/nats/decision-feed-publisher';
import { ensureStreams } from '../../apps/session-service/src/nats/nats-streams';
import { natsNames, type NatsNames } from '../../apps/session-service/src/nats/nats-names';

jest.setTimeout(60_000);

describeWithNats('NATS decisions feed, stream behind')('a decisions feed restarting against a stream behind its checkpoint', () => {
  let root: string;
  let store: SqliteEventStore;
  let readModel: ReadModelStore;
  let running: DecisionFeedPublisher | null;
  let warn: jest.SpyInstance;

  const nats = useNatsSuite('NATS decisions feed, stream behind');
  afterAll(() => nats.close());

  beforeEach(() => {
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'nats-feed-behind-'));
    store = SqliteEventStore.open(path.join(root, 'events.sqlite'));
    readModel = ReadModelStore.open(path.join(root, 'read-models.sqlite'));
    running = null;
  });

  afterEach(async () => {
    await running?.stop();
    await store.close();
    readModel.db.close();
    fs.rmSync(root, { recursive: true, force: true });
    jest.restoreAllMocks();
  });

  const newNames = async (): Promise<NatsNames> => {
    const names = natsNames(nats.prefix());
    await ensureStreams(nats.client.jsm, names, 5000);
    return names;
  };

  /** Starts the replica's feed on `names` (the one read-model file: its checkpoint survives), stopping the running one first. */
  const startFeed = async (names: NatsNames): Promise<DecisionFeedPublisher> => {
    await running?.stop();
    running = new DecisionFeedPublisher(store, readModel, nats.nc, nats.client.js, nats.client.jsm, names);
    await running.start();
    return running;
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
  /** Appends a conversation event (not a decision); returns its position. */
  const converse = async (session: string): Promise<bigint> =>
    (
      await store.appendToStream(`session-${sessionKey('default', session)}`, [
        { id: randomUUID(), type: 'ConversationEventAppended', data: { text: 'more' }, metadata: { tenantId: 'default', sessionId: session } },
      ])
    ).position;

  /** The `Log-Position` of every message in the decisions stream of `names`, in stream order. */
  const streamPositions = async (names: NatsNames): Promise<string[]> => {
    const info = await nats.client.jsm.streams.info(names.decisionStream);
    const out: string[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
      const m = await nats.client.jsm.streams.getMessage(names.decisionStream, { seq });
      if (m) out.push(m.header?.get(LOG_POSITION_HEADER) ?? `no position (seq ${seq})`);
    }
    return out;
  };
  const reaches = (f: DecisionFeedPublisher, position: bigint, what: string) =>
    eventually(() => f.state().checkpoint >= position && f.state().lastError === null, 20_000, what);
  const feedWarnings = () => warn.mock.calls.map(([line]) => String(line)).filter((line) => line.startsWith('decision feed'));

  it('back on a server whose stream is behind: publishes the decisions it lacks, once, in log order, with one warn line naming the gap', async () => {
    const x = await newNames();
    const y = await newNames();
    const first = await decide('s1');
    let feed = await startFeed(x);
    await reaches(feed, first, 'the feed to publish the first decision to X');

    // The replica moves to server Y (another stream): the decisions made there go to Y only.
    feed = await startFeed(y);
    const onY = [await decide('s1'), await decide('s2'), await decide('s1')];
    const tail = await converse('s2');
    await reaches(feed, tail, 'the feed to pass the decisions made on Y');
    expect(await streamPositions(y)).toEqual(onY.map(String));
    // Y's stream was empty under a checkpoint past 0 (the second test).
    expect(feedWarnings()).toHaveLength(1);
    warn.mockClear();

    // Back on X: X's stream ends at the first decision, the checkpoint at the last event.
    feed = await startFeed(x);
    const next = await decide('s2');
    await reaches(feed, next, 'the feed to publish on X again');
    expect(await streamPositions(x)).toEqual([first, ...onY, next].map(String));
    expect(feedWarnings()).toHaveLength(1);
    expect(feedWarnings()[0]).toContain(`${x.decisionStream} lacks decisions this log made after position ${first}`);
    expect(feedWarnings()[0]).toContain(`checkpoint (nats-decision-feed, position ${tail})`);
    expect(feedWarnings()[0]).toContain(`from position ${onY[0]}`);
    expect(feed.state().lastError).toBeNull();

    // A routine restart (the checkpoint past the last decision by a conversation event): nothing published again, no line.
    const after = await converse('s1');
    await reaches(feed, after, 'the feed to pass the conversation event');
    warn.mockClear();
    feed = await startFeed(x);
    const last = await decide('s1');
    await reaches(feed, last, 'the feed to publish after the routine restart');
    expect(await streamPositions(x)).toEqual([first, ...onY, next, last].map(String));
    expect(feedWarnings()).toEqual([]);
  });

  it('on an empty stream under a checkpoint past 0: resumes after the checkpoint, with one warn line saying the decisions up to it are not published again', async () => {
    const x = await newNames();
    const earlier = await decide('s1');
    let feed = await startFeed(x);
    await reaches(feed, earlier, 'the feed to publish the first decision');

    const empty = await newNames();
    feed = await startFeed(empty);
    const next = await decide('s1');
    await reaches(feed, next, 'the feed to publish on the empty stream');
    expect(await streamPositions(empty)).toEqual([String(next)]);
    expect(feedWarnings()).toHaveLength(1);
    expect(feedWarnings()[0]).toContain(`${empty.decisionStream} holds no message`);
    expect(feedWarnings()[0]).toContain(`position ${earlier}); the decisions up to it are not published again`);
  });
});
