/**
 * The decisions feed of a replica paused for longer than JetStream's duplicate window (its NATS
 * connection lost while another replica's worked) publishes nothing the other replica published
 * when it resumes: the decisions stream holds each position once (README, decisions feed); and it
 * still deletes an erased session's decisions it published itself after the other replica's
 * deletion. Two {@link DecisionFeedPublisher}s follow one SQLite log against the machine's NATS
 * server, each with its own read-model file for its checkpoint; A's JetStream handles fail while a
 * flag is set (and its publishes can be held back). Each test has its own prefix and streams; the
 * decisions stream's duplicate window is shortened to 200 ms so that a pause outlasts it in a
 * second. Runtime ≈ 5 s.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import { nanos } from '@nats-io/transport-node';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { SqliteEventStore, type SubscribeOptions, type Subscription } from '@lib/event-store';
import { COMPACTION_COMPLETED, ReadModelStore, SESSION_ERASED, erasureStream, sessionKey } from '@lib/session';
import { deleteStreams, describeWithNats, eventually, uniquePrefix, useNatsSuite } from '../support/nats-test';
import { ReplicaLink } from '../support/nats-replica-link';
import { DecisionFeedPublisher, LOG_POSITION_HEADER } from '../../apps/session-service/src/nats/decision-feed-publisher';
import { ensureStreams } from '../../apps/session-service/src/nats/nats-streams';
import { natsNames, type NatsNames } from '../../apps/session-service/src/nats/nats-names';

jest.setTimeout(60_000);

const DUPLICATE_WINDOW_MS = 200;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describeWithNats('NATS decision feed pause')('a decisions feed paused longer than the duplicate window', () => {
  let root: string;
  let names: NatsNames;
  let store: SqliteEventStore;
  let readModels: ReadModelStore[];
  let feeds: DecisionFeedPublisher[];

  const nats = useNatsSuite('NATS decision feed pause');

  afterAll(() => nats.close());

  beforeEach(async () => {
    names = natsNames(uniquePrefix());
    await ensureStreams(nats.client.jsm, names, 5000);
    await nats.client.jsm.streams.update(names.decisionStream, { duplicate_window: nanos(DUPLICATE_WINDOW_MS) });
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'nats-feed-pause-'));
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
  });

  const feed = (name: string, js: JetStreamClient, jsm: JetStreamManager): DecisionFeedPublisher => {
    const readModel = ReadModelStore.open(path.join(root, `${name}.sqlite`));
    readModels.push(readModel);
    const publisher = new DecisionFeedPublisher(store, readModel, nats.nc, js, jsm, names);
    feeds.push(publisher);
    return publisher;
  };

  /** Appends a `CompactionCompleted` of `session` (tenant `default`) after a conversation event; returns the decision's position. */
  const decide = async (session: string): Promise<bigint> => {
    const stream = `session-${sessionKey('default', session)}`;
    const metadata = { tenantId: 'default', sessionId: session };
    const result = await store.appendToStream(stream, [
      { id: randomUUID(), type: 'ConversationEventAppended', data: { text: 'hello' }, metadata },
      { id: randomUUID(), type: COMPACTION_COMPLETED, data: { compactionId: randomUUID(), checkpoint: 'internal' }, metadata },
    ]);
    return result.position;
  };

  /** Appends the erasure record of `session`; returns its position. */
  const erase = async (session: string): Promise<bigint> => {
    const data = { sessionId: session, erasedEvents: 4, erasedAt: new Date().toISOString() };
    return (await store.appendToStream(erasureStream('default'), [{ id: randomUUID(), type: SESSION_ERASED, data }])).position;
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

  it('clears its pause as soon as the log can be read again, with no decision waiting (an idle instance after a store outage)', async () => {
    const position = await decide('s1');
    // A store that goes down under the feed: a read in progress fails, and every read fails while it is down.
    let storeDown = false;
    let goDown: (error: Error) => void = () => undefined;
    const wentDown = () => new Promise<never>((_, reject) => (goDown = reject));
    let down = wentDown();
    down.catch(() => undefined);
    const failing = (): Subscription => ({
      [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error('test: store down')) }),
      close: async () => undefined,
    });
    const flaky = Object.assign(Object.create(store) as SqliteEventStore, {
      subscribeToAll: (options?: SubscribeOptions): Subscription => {
        if (storeDown) return failing();
        const live = store.subscribeToAll(options);
        const events = live[Symbol.asyncIterator]();
        return { [Symbol.asyncIterator]: () => ({ next: () => Promise.race([events.next(), down]) }), close: () => live.close() };
      },
      headPosition: () => (storeDown ? Promise.reject(new Error('test: store down')) : store.headPosition()),
    });
    const readModel = ReadModelStore.open(path.join(root, 'idle.sqlite'));
    readModels.push(readModel);
    const idle = new DecisionFeedPublisher(flaky, readModel, nats.nc, nats.client.js, nats.client.jsm, names);
    feeds.push(idle);
    await idle.start();
    await reaches(idle, position, 'the feed to publish the decision already in the log');
    storeDown = true;
    goDown(new Error('test: store down'));
    await eventually(() => idle.state().lastError !== null, 10_000, 'the feed to pause on the store outage');
    down = wentDown();
    down.catch(() => undefined);
    storeDown = false;
    // nothing is appended after the outage: the pause clears without a decision to publish
    await reaches(idle, position, 'the feed to clear its pause while idle');
    expect(await streamPositions()).toEqual([String(position)]);
  });

  it('paused on a log whose last events were deleted meanwhile (an erasure interrupted after its stream deletion), resumes and is caught up without a new event', async () => {
    const link = new ReplicaLink(nats.client);
    const a = feed('a', link.js(), link.jsm());
    const kept = await decide('kept');
    await a.start();
    await reaches(a, kept, 'the feed to publish the decision already in the log');
    // NATS is lost: the feed pauses on the publish of `gone`'s decision, after `gone`'s conversation event.
    link.down = true;
    const gone = await decide('gone');
    await eventually(() => a.state().lastError !== null, 10_000, 'the feed to pause on the publish');
    expect(a.state().checkpoint).toBe(gone - 1n);
    // `gone` is erased meanwhile, and the erasure ends after its stream deletion, before its record: the log ends with deleted events.
    const stream = `session-${sessionKey('default', 'gone')}`;
    await store.deleteStream(stream, { expectedRevision: (await store.streamRevision(stream))! });
    expect(await store.headPosition()).toBe(gone);

    link.down = false;
    // Nothing is appended: the feed finds nothing left to read up to the head, resumes, and has read the log up to it.
    await eventually(() => a.state().lastError === null, 20_000, 'the feed to resume with only deleted events after its checkpoint');
    expect(a.state()).toMatchObject({ checkpoint: gone - 1n, skippedTo: gone, lastErrorAt: null });
    expect(await streamPositions()).toEqual([String(kept)]);

    // It publishes what comes next.
    const next = await decide('next');
    await reaches(a, next, 'the feed to publish the next decision');
    expect(a.state().skippedTo).toBe(next);
    expect(await streamPositions()).toEqual([String(kept), String(next)]);
  });

  it('publishes none of the positions another replica published meanwhile, then goes on publishing in order', async () => {
    const link = new ReplicaLink(nats.client);
    const a = feed('a', link.js(), link.jsm());
    await a.start();
    link.down = true;

    // While A is paused, B (a working replica) publishes every decision and the erasure of s1.
    const positions: bigint[] = [];
    positions.push(await decide('s1'), await decide('s2'), await decide('s1'));
    const erasure = await erase('s1');
    positions.push(await decide('s2'), await decide('s3'));
    await eventually(() => a.state().lastError !== null, 10_000, 'feed A to pause');
    const b = feed('b', nats.client.js, nats.client.jsm);
    await b.start();
    const head = await store.headPosition();
    await reaches(b, head, 'feed B to reach the head');
    await b.stop();
    // s1's decisions before its erasure were deleted by B before it published the record.
    const expected = [positions[1], erasure, positions[3], positions[4]].map(String);
    expect(await streamPositions()).toEqual(expected);

    // A stays paused past the duplicate window (JetStream forgets the message ids), then its connection is back.
    await sleep(DUPLICATE_WINDOW_MS * 5);
    expect(a.state().checkpoint).toBeLessThan(positions[0]);
    link.down = false;
    await reaches(a, head, 'feed A to resume and reach the head');
    expect(await streamPositions()).toEqual(expected);

    // A publishes what comes next (B stopped), in order, without a gap.
    const next = await decide('s2');
    await reaches(a, next, 'feed A to publish the next decision');
    expect(await streamPositions()).toEqual([...expected, String(next)]);
  });

  it('resuming past an erasure another replica published, deletes the erased session’s decision it published itself after that', async () => {
    const link = new ReplicaLink(nats.client);
    const a = feed('a', link.js(), link.jsm());
    await a.start();
    link.hold();

    // A lags: its publish of s1's decision hangs while B publishes it, erases s1 (deleting it) and publishes the erasure record.
    const decision = await decide('s1');
    const erasure = await erase('s1');
    const b = feed('b', nats.client.js, nats.client.jsm);
    await b.start();
    await reaches(b, erasure, 'feed B to publish the erasure record');
    expect(await streamPositions()).toEqual([String(erasure)]);

    // Past the duplicate window, A's publish goes through (a copy of the erased session's decision),
    // then A loses NATS before it reaches the erasure record: paused.
    await sleep(DUPLICATE_WINDOW_MS * 5);
    link.down = true;
    link.release();
    await eventually(() => a.state().lastError !== null, 10_000, 'feed A to pause');
    expect(a.state().checkpoint).toBe(decision);
    expect(await streamPositions()).toEqual([String(erasure), String(decision)]);

    // B publishes on; A resumes after the last position B published: it passes the erasure record, deleting the copy.
    const next = await decide('s2');
    await reaches(b, next, 'feed B to publish the next decision');
    link.down = false;
    await reaches(a, next, 'feed A to resume and reach the head');
    expect(await streamPositions()).toEqual([String(erasure), String(next)]);
  });
});
