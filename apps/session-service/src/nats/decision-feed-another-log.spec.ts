/**
 * Where the decisions feed resumes when its stream holds another log's messages (newcomer ncgdpr:
 * after a store restored from a backup, or another store on the same prefix, the feed started
 * after the stream's last position, past the new log's head, and skipped every new event below
 * it). {@link lastMessageOfThisLog} against an in-memory decisions stream (the JetStream calls it
 * makes: `STREAM.INFO`, `STREAM.MSG.GET` by sequence and with `next_by_subj`) and a real SQLite
 * log; and the message ids ({@link decisionMessageId}): one per event, not per position.
 */
import fc from 'fast-check';
import type { JetStreamManager, StoredMsg } from '@nats-io/jetstream';
import { SqliteEventStore, type RecordedEvent } from '@lib/event-store';
import { checkpointEventIdentity } from '@lib/session';
import { decisionMessageId, lastMessageOfThisLog } from './decision-feed-publisher';
import { LOG_EVENT_HEADER, LOG_POSITION_HEADER, natsNames } from './nats-names';

const names = natsNames('tfeed');

/** One message of the stream: its position, what it was published for, whether an erasure deleted it since. */
interface Msg {
  position: number;
  /** `this`: this log's event at `position`; `other`: another log's event; `legacy`: no `Log-Event` (an earlier release). */
  kind: 'this' | 'other' | 'legacy';
  deleted: boolean;
}

/** A decisions stream in memory, answering the JetStream calls `lastMessageOfThisLog` makes, counting message reads. */
function fakeStream(messages: Msg[], identityAt: (position: number) => string): { jsm: JetStreamManager; reads: () => number } {
  let reads = 0;
  const stored = (seq: number): StoredMsg | null => {
    const m = messages[seq - 1];
    if (!m || m.deleted) return null;
    const h = new Map<string, string>([[LOG_POSITION_HEADER, String(m.position)]]);
    if (m.kind === 'this') h.set(LOG_EVENT_HEADER, identityAt(m.position));
    if (m.kind === 'other') h.set(LOG_EVENT_HEADER, `session-t.other@0 other-${seq} 2020-01-01T00:00:00.000Z`);
    return { seq, subject: `${names.prefix}.decisions.t.s`, header: { get: (k: string) => h.get(k) ?? '' } } as unknown as StoredMsg;
  };
  const existing = messages.map((m, i) => (m.deleted ? 0 : i + 1)).filter((seq) => seq > 0);
  const jsm = {
    streams: {
      info: async () => ({
        state: { messages: existing.length, first_seq: existing[0] ?? messages.length + 1, last_seq: messages.length },
      }),
      getMessage: async (_stream: string, query: { seq: number; next_by_subj?: string }) => {
        reads++;
        if (query.next_by_subj === undefined) return stored(query.seq);
        const seq = existing.find((s) => s >= query.seq);
        return seq === undefined ? null : stored(seq);
      },
    },
  } as unknown as JetStreamManager;
  return { jsm, reads: () => reads };
}

describe('where the decisions feed resumes in a stream holding another log’s messages', () => {
  const HEAD = 40;
  let store: SqliteEventStore;
  const identities = new Map<number, string>();
  beforeAll(async () => {
    store = SqliteEventStore.open(':memory:');
    for (let i = 1; i <= HEAD; i++) {
      const { position } = await store.appendToStream(`session-t.s${i % 3}`, [
        { id: `3f1c1a8e-0000-4000-8000-${String(i).padStart(12, '0')}`, type: 'T', data: {} },
      ]);
      identities.set(Number(position), checkpointEventIdentity((await store.eventAt(position))!));
    }
  });
  afterAll(() => store.close());

  const resumeOf = async (messages: Msg[]) => {
    const stream = fakeStream(messages, (p) => identities.get(p)!);
    return { ...(await lastMessageOfThisLog(stream.jsm, names, store)), reads: stream.reads() };
  };
  /** Whether the feed takes `m` as this log's: its event is the store's there, or it records none and is not past the head. */
  const ofThisLog = (m: Msg) => !m.deleted && (m.kind === 'this' || (m.kind === 'legacy' && m.position <= HEAD));

  const upToHead = fc.record({
    position: fc.integer({ min: 1, max: HEAD }),
    kind: fc.constantFrom<Msg['kind']>('this', 'other', 'legacy'),
    deleted: fc.boolean(),
  });
  const pastHead = fc.record({
    position: fc.integer({ min: HEAD + 1, max: HEAD * 3 }),
    kind: fc.constantFrom<Msg['kind']>('other', 'legacy'),
    deleted: fc.boolean(),
  });

  it('given the messages past the head at the stream’s end (a restored store, another store), resumes after exactly the last message of this log', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(upToHead, { maxLength: 30 }), fc.array(pastHead, { maxLength: 60 }), async (before, after) => {
        const messages = [...before, ...after];
        const last = [...messages].reverse().find(ofThisLog);
        const resume = await resumeOf(messages);
        const expected = messages.every((m) => m.deleted) ? 0n : last ? BigInt(last.position) : null;
        expect(resume.position).toBe(expected);
        if (last?.kind === 'this') expect(resume.event).toBe(identities.get(last.position));
        // the stream's last message not this log's: said (the feed's warn line and /health), else not
        const lastThere = [...messages].reverse().find((m) => !m.deleted);
        expect(resume.lastOff !== null).toBe(lastThere !== undefined && !ofThisLog(lastThere));
      }),
      { numRuns: 300 },
    );
  });

  it('in any stream (two logs publishing on one prefix at once), never resumes after another log’s message', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(upToHead, pastHead), { maxLength: 60 }), async (messages) => {
        const resume = await resumeOf(messages);
        if (resume.position === null || resume.position === 0n) return;
        expect(messages.some((m) => ofThisLog(m) && BigInt(m.position) === resume.position)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('passes 100,000 messages of the lost log past the head in a few dozen reads, not one read each', async () => {
    const ours: Msg[] = Array.from({ length: 30 }, (_, i) => ({ position: i + 1, kind: 'this', deleted: i % 7 === 3 }));
    const lost: Msg[] = Array.from({ length: 100_000 }, (_, i) => ({ position: 31 + i, kind: 'other', deleted: i % 11 === 5 }));
    const resume = await resumeOf([...ours, ...lost]);
    expect(resume.position).toBe(30n);
    expect(resume.lastOff).toMatchObject({ position: 100_030n, head: BigInt(HEAD), found: null });
    expect(resume.reads).toBeLessThanOrEqual(2 + 2 * Math.ceil(Math.log2(100_030)));
  });

  it('checks the messages against a head read after the stream’s state: a decision another replica writes and publishes meanwhile is this log’s (newcomer ncops)', async () => {
    const log = SqliteEventStore.open(':memory:');
    try {
      const ids = new Map<number, string>();
      const write = async (i: number) => {
        const { position } = await log.appendToStream('session-t.s', [{ id: `3f1c1a8e-0000-4000-8000-${String(i).padStart(12, '0')}`, type: 'T', data: {} }]);
        ids.set(Number(position), checkpointEventIdentity((await log.eventAt(position))!));
        return Number(position);
      };
      const messages: Msg[] = [{ position: await write(1), kind: 'this', deleted: false }];
      const stream = fakeStream(messages, (p) => ids.get(p)!);
      // Another replica writes and publishes a decision just before the stream's state is read.
      const info = stream.jsm.streams.info.bind(stream.jsm.streams);
      stream.jsm.streams.info = async (name: string) => {
        messages.push({ position: await write(2), kind: 'this', deleted: false });
        return info(name);
      };
      expect(await lastMessageOfThisLog(stream.jsm, names, log)).toEqual({ position: 2n, event: ids.get(2), lastOff: null, head: 2n });
    } finally {
      await log.close();
    }
  });

  it('takes the messages of an earlier release (no Log-Event) as this log’s up to the head: an upgrade republishes nothing', async () => {
    const messages: Msg[] = Array.from({ length: 10 }, (_, i) => ({ position: 2 * i + 1, kind: 'legacy', deleted: false }));
    expect(await resumeOf(messages)).toMatchObject({ position: 19n, lastOff: null, reads: 1 });
  });
});

describe('the message id of a decision', () => {
  const event = (over: Partial<RecordedEvent> = {}): RecordedEvent => ({
    id: 'compaction-1:decision',
    type: 'CompactionCompleted',
    data: {},
    metadata: null,
    streamId: 'session-default.s1',
    revision: 6n,
    position: 7n,
    created: new Date('2025-03-01T10:00:00.000Z'),
    ...over,
  });

  it('is the same for the same event (published again: JetStream and consumers drop the copy), and differs for another event at the same position', () => {
    expect(decisionMessageId(event())).toMatch(/^7-[0-9a-f]{16}$/);
    expect(decisionMessageId(event())).toBe(decisionMessageId(event()));
    // A store restored from a backup and written again: the same position, another event (or the same id recorded at another time).
    for (const other of [
      { created: new Date('2025-03-02T10:00:00.000Z') },
      { id: 'compaction-2:decision' },
      { streamId: 'session-default.s2' },
      { revision: 7n },
    ])
      expect(decisionMessageId(event(other))).not.toBe(decisionMessageId(event()));
  });
});
