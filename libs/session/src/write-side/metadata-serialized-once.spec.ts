/**
 * A request's metadata is serialized once, when it is validated (newcomer: an append of 80 events
 * of 6,000 metadata keys each was serialized again by the store's append and by the projector, and
 * parsed back by the store's read of its own commit). Past validation, which remembers its JSON
 * (`rememberJsonText`), the decision, the store's serialization of the event and the projector's
 * log JSON splice that text in, and the SQLite store hands the projector the payload it was given
 * rather than parsing it back: counted with proxies that record every listing of the metadata's
 * keys and every read of its members, never timed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { jsonText, knownJsonText, prepareAppend, rememberJsonText, SqliteEventStore, withoutSharedValueFreeze } from '@lib/event-store';
import { decideAppend, type AppendEvents } from '../decider/session-decider';
import { sessionKey, sessionStream, type ConversationEventData } from '../events/session-stream-events';
import { objectJson } from '../read-side/object-json';
import { listLogJson } from '../read-side/queries/session-log-query';
import { ReadModelStore } from '../read-side/read-model-store';
import { SessionProjector } from '../read-side/session-projector';
import { countingReads } from '../../../../test/support/counting-proxies';

/** Listings of keys (`ownKeys`) and reads of members (`get`, `getOwnPropertyDescriptor`) of the objects of a value. */
interface Reads {
  listings: number;
  members: number;
}

/** `value` with each of its objects behind a proxy counting into `reads` (a descriptor's lookup as a read of a member; `in` not counted). */
const counted = <T>(value: T, reads: Reads): T =>
  countingReads(value, { counts: reads, into: { listing: 'listings', member: 'members', descriptor: 'members' } });

/** UTF-16 code units of the strings in `value` (keys left out), as validation counts them. */
function stringUnitsOf(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (value === null || typeof value !== 'object') return 0;
  return Object.values(value).reduce<number>((n, v) => n + stringUnitsOf(v), 0);
}

/** Metadata of `n` keys, some holding objects, as a client may send it. */
const metadataOf = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i % 10 === 0 ? { nested: [i, `v${i}`] } : i]));

const append = (metadata: Record<string, unknown>): AppendEvents => ({
  type: 'AppendEvents',
  tenantId: 't',
  sessionId: 's',
  events: [
    { event: { id: 'u1', type: 'user', text: 'hello' }, metadata },
    { event: { id: 'u2', type: 'user', text: 'again' }, createdAt: '2026-01-31T12:00:00Z', metadata },
  ],
  userId: 'alice',
});

describe('metadata validated once is not serialized again on its way to the log and the read models', () => {
  it('given metadata whose JSON was remembered at validation, when the append is decided, written and projected, then its keys are never listed nor its members read again, and every text is JSON.stringify', () => {
    const reads: Reads = { listings: 0, members: 0 };
    const metadata = counted(metadataOf(2000), reads);
    rememberJsonText(metadata, JSON.stringify(metadata));
    const before = { ...reads };
    const decision = decideAppend(append(metadata), null, [
      { cl100k_base: 2, o200k_base: 2, chars: 13 },
      { cl100k_base: 2, o200k_base: 2, chars: 13 },
    ]);
    const serialized = prepareAppend('session-t.s', decision.events, 'no_stream');
    const data = decision.events[0].data as ConversationEventData;
    const logJson = objectJson(data, { event: JSON.stringify(data.event), costs: JSON.stringify(data.costs) });
    expect(reads).toEqual(before);
    const plain = (e: unknown) => JSON.parse(JSON.stringify(e)) as unknown;
    expect(serialized.map((e) => e.data)).toEqual(decision.events.map((e) => JSON.stringify(plain(e.data))));
    expect(logJson).toBe(JSON.stringify(plain(data)));
    // the conversation payloads are JSON values the store may hand back as they are (no parse of the metadata again)
    expect(decision.events.every((e) => e.dataIsParsedJson === true)).toBe(true);
  });

  it('given metadata whose JSON and strings were remembered at validation, when the append is written to the SQLite store and projected, then the metadata is neither read nor parsed again, and the log holds its JSON', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'metadata-once-'));
    const store = SqliteEventStore.open(join(dir, 'events.sqlite'), { pollIntervalMs: 20 });
    // on a file, as the service's: the projector then weighs each batch's text (a large one goes to a worker thread)
    const projector = new SessionProjector(ReadModelStore.open(join(dir, 'read-models.sqlite')), { retryDelayMs: 5, maxRetryDelayMs: 20 });
    const parses = jest.spyOn(JSON, 'parse');
    try {
      projector.start(store);
      const reads: Reads = { listings: 0, members: 0 };
      const plain = metadataOf(2000);
      const metadata = counted(plain, reads);
      rememberJsonText(metadata, JSON.stringify(metadata), stringUnitsOf(plain));
      const before = { ...reads };
      const decision = decideAppend(append(metadata), null);
      // the freeze of shared values in test runs walks them: production does not
      await withoutSharedValueFreeze(async () => {
        const { position } = await store.appendToStream(sessionStream(sessionKey('t', 's')), decision.events, { expectedRevision: 'no_stream' });
        expect(await projector.waitForPosition(position, 10_000)).toBe(true);
      });
      expect(reads).toEqual(before);
      const metadataText = JSON.stringify(plain);
      expect(parses.mock.calls.filter(([text]) => typeof text === 'string' && text.includes(metadataText))).toEqual([]);
      const log = JSON.parse(listLogJson(projector.store, 't', 's')!.toString('utf8')) as { events: Array<{ data: { metadata: unknown } }> };
      expect(log.events.map((e) => e.data.metadata)).toEqual([plain, plain]);
    } finally {
      parses.mockRestore();
      await projector.stop();
      projector.store.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('given metadata whose JSON was not remembered, when the event is written, then it is serialized as before', () => {
    const reads: Reads = { listings: 0, members: 0 };
    const metadata = counted(metadataOf(10), reads);
    const decision = decideAppend(append(metadata), null, [
      { cl100k_base: 2, o200k_base: 2, chars: 13 },
      { cl100k_base: 2, o200k_base: 2, chars: 13 },
    ]);
    expect(prepareAppend('session-t.s', decision.events, 'no_stream')[0].data).toBe(JSON.stringify(JSON.parse(JSON.stringify(decision.events[0].data))));
    expect(reads.listings).toBeGreaterThan(0);
  });

  it('property: jsonText gives JSON.stringify of any JSON value, with or without remembered members', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })),
        fc.array(fc.boolean(), { maxLength: 8 }),
        fc.jsonValue({ maxDepth: 3 }),
        (record, remember, other) => {
          const keys = Object.keys(record);
          keys.forEach((key, i) => {
            const member = record[key];
            if (remember[i % Math.max(1, remember.length)] && member !== null && typeof member === 'object') rememberJsonText(member, JSON.stringify(member));
          });
          expect(jsonText(record)).toBe(JSON.stringify(record));
          expect(jsonText(other)).toBe(JSON.stringify(other));
          expect(knownJsonText(other)).toBeUndefined();
        },
      ),
      { numRuns: 300 },
    );
  });
});
