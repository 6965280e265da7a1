/**
 * The decisions feed on a log whose events are deleted under it (erasures interrupted after their
 * stream deletion, before their record: the log may end with deleted events) while its NATS
 * connection comes and goes (it pauses on a publish that fails): whatever the order, once NATS is
 * back it resumes and has read the log up to the store's head without another event being
 * appended (before: a feed paused with only deleted events after its checkpoint stayed paused
 * until the next append), publishes every decision still in the log once, in log order, and
 * nothing else. A real SQLite log; an in-memory decisions stream answering the JetStream calls the
 * feed makes (publish, `STREAM.INFO`, `STREAM.MSG.GET`), failing while "down".
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { Logger } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import type { JetStreamClient, JetStreamManager, StoredMsg } from '@nats-io/jetstream';
import { SqliteEventStore } from '@lib/event-store';
import { COMPACTION_COMPLETED, ReadModelStore, sessionKey } from '@lib/session';
import { DecisionFeedPublisher } from './decision-feed-publisher';
import { LOG_EVENT_HEADER, LOG_POSITION_HEADER, natsNames } from './nats-names';

const names = natsNames('tfeedtail');

/** A decisions stream in memory with the feed's JetStream handles on it; every call fails while `down`. */
function fakeNats() {
  const messages: { position: string; event: string; id: string }[] = [];
  const link = { down: false };
  const check = () => {
    if (link.down) throw new Error('test: NATS connection lost');
  };
  const stored = (seq: number): StoredMsg | null => {
    const m = messages[seq - 1];
    if (!m) return null;
    const h = new Map([
      [LOG_POSITION_HEADER, m.position],
      [LOG_EVENT_HEADER, m.event],
    ]);
    return { seq, subject: `${names.prefix}.decisions.default.s`, header: { get: (k: string) => h.get(k) ?? '' } } as unknown as StoredMsg;
  };
  const js = {
    publish: async (_subject: string, _payload: Uint8Array, options: { headers: { get(k: string): string }; msgID: string }) => {
      check();
      // JetStream's duplicate window: a message id published again is dropped.
      if (!messages.some((m) => m.id === options.msgID))
        messages.push({ position: options.headers.get(LOG_POSITION_HEADER), event: options.headers.get(LOG_EVENT_HEADER), id: options.msgID });
      return {};
    },
  } as unknown as JetStreamClient;
  const jsm = {
    streams: {
      info: async () => {
        check();
        return { state: { messages: messages.length, first_seq: 1, last_seq: messages.length } };
      },
      getMessage: async (_stream: string, query: { seq: number }) => {
        check();
        return stored(query.seq);
      },
    },
  } as unknown as JetStreamManager;
  return { js, jsm, link, published: () => messages.map((m) => BigInt(m.position)) };
}

type Step = { kind: 'decide'; session: number } | { kind: 'erase'; session: number } | { kind: 'down' } | { kind: 'up' } | { kind: 'wait'; ms: number };

/** Steps over two sessions, erasures and waits (the feed reads and pauses meanwhile) more often than NATS changes. */
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('decide' as const), session: fc.integer({ min: 0, max: 1 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('erase' as const), session: fc.integer({ min: 0, max: 1 }) }) },
  { weight: 1, arbitrary: fc.constant<Step>({ kind: 'down' }) },
  { weight: 1, arbitrary: fc.constant<Step>({ kind: 'up' }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 100 }) }) },
);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the decisions feed on a log whose events are deleted under it while NATS comes and goes', () => {
  beforeAll(() => {
    for (const level of ['log', 'warn'] as const) jest.spyOn(Logger.prototype, level).mockImplementation(() => undefined);
  });
  afterAll(() => jest.restoreAllMocks());

  jest.setTimeout(120_000);

  it('once NATS is back, resumes and has read the log up to its head with no new event, having published each decision left in the log once, in log order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 12 }), fc.integer({ min: 0, max: 1 }), async (before, last) => {
        // Then NATS is lost under a decision of `last` (the feed pauses on its publish), and `last` is erased
        // (its stream deletion only): the log ends with deleted events, unless the feed published it first.
        const steps: Step[] = [...before, { kind: 'down' }, { kind: 'decide', session: last }, { kind: 'wait', ms: 50 }, { kind: 'erase', session: last }];
        const store = SqliteEventStore.open(':memory:');
        const readModels = ReadModelStore.open(':memory:');
        const nats = fakeNats();
        const feed = new DecisionFeedPublisher(store, readModels, {} as NatsConnection, nats.js, nats.jsm, names);
        const decisions = new Set<bigint>();
        try {
          await feed.start();
          for (const s of steps) {
            const stream = `session-${sessionKey('default', `s${'session' in s ? s.session : 0}`)}`;
            if (s.kind === 'decide') {
              const metadata = { tenantId: 'default', sessionId: `s${s.session}` };
              const { position } = await store.appendToStream(stream, [
                { id: randomUUID(), type: 'ConversationEventAppended', data: { text: 'hello' }, metadata },
                { id: randomUUID(), type: COMPACTION_COMPLETED, data: { compactionId: randomUUID(), checkpoint: 'internal' }, metadata },
              ]);
              decisions.add(position);
            } else if (s.kind === 'erase') {
              // The erasure's stream deletion; the process ends before its record.
              const revision = await store.streamRevision(stream);
              if (revision !== null) await store.deleteStream(stream, { expectedRevision: revision });
            } else if (s.kind === 'down' || s.kind === 'up') nats.link.down = s.kind === 'down';
            else await sleep(s.ms);
          }
          nats.link.down = false;

          const head = await store.headPosition();
          // Longer than the feed's longest wait before a retry after these outages (its delay doubles from 100 ms).
          const deadline = Date.now() + 6_000;
          while (!(feed.state().lastError === null && feed.state().skippedTo === head)) {
            if (Date.now() > deadline)
              throw new Error(
                `the feed did not read up to the head ${head}: ${JSON.stringify(feed.state(), (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`,
              );
            await sleep(20);
          }
          expect(feed.state().checkpoint).toBeLessThanOrEqual(head);
          const published = nats.published();
          // In log order, each once, only decisions.
          expect(published).toEqual([...new Set(published)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
          for (const p of published) expect(decisions.has(p)).toBe(true);
          // Every decision still in the log is published (those deleted before the feed read them are not).
          const left = (await store.readAll({ fromPosition: 0n })).filter((e) => e.type === COMPACTION_COMPLETED).map((e) => e.position);
          for (const p of left) expect(published).toContain(p);
        } finally {
          await feed.stop();
          await store.close();
          readModels.db.close();
        }
      }),
      // A failure is reported as found (shrinking would wait out the deadline again for each candidate).
      { numRuns: 30, endOnFailure: true },
    );
  });
});
