/**
 * A resend of stored events spanning several earlier requests is a retry also when decisions lie
 * between those requests in the log (a compaction, a policy set): it writes nothing and answers the
 * revision of its last event, as "Ids and retries" in docs/http-api.md promises "whatever the chunking of
 * the first run". Newcomer ncint64 F1: a whole-history resend after a compaction was refused 409
 * `duplicate_event_id` with advice ("send only the events not appended yet") it could not follow.
 * Only decisions may lie between: a resend that skips a stored message, swaps two, or changes one's
 * content is still refused, nothing written.
 */
import type { SessionEvent } from '@lib/compaction';
import { parseStrategy } from '@lib/compaction';
import { SqliteEventStore, type ExpectedRevision } from '@lib/event-store';
import type { EventBus } from '@nestjs/cqrs';
import { ExtractiveSummarizer } from '../summarizers/extractive-summarizer';
import { sessionKey, sessionStream } from '../events/session-stream-events';
import { DuplicateEventIdConflictError } from '../errors';
import { AppendSessionEventsCommand, AppendSessionEventsHandler, type AppendSessionEventsResult } from './append-session-events';
import { CompactSessionCommand, CompactSessionHandler } from './compact-session';
import { SetCompactionPolicyCommand, SetCompactionPolicyHandler } from './set-compaction-policy';
import { SessionStateCache } from './session-state-cache';
import { appendAs } from './testing/append-as';

const noBus = { publish: () => undefined } as unknown as EventBus;
const m = (i: number, text = `message ${i}`): SessionEvent => ({ id: `m${i}`, type: i % 2 ? 'assistant' : 'user', text });
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => m(from + k));

describe('a resend of stored events with decisions between the requests that wrote them', () => {
  let store: SqliteEventStore;
  let cache: SessionStateCache;
  let writer: AppendSessionEventsHandler;
  beforeEach(() => {
    store = SqliteEventStore.open(':memory:');
    cache = new SessionStateCache(store);
    writer = new AppendSessionEventsHandler(store, cache, noBus);
  });
  afterEach(() => store.close());

  const log = async (sessionId: string) => (await store.readStream(sessionStream(sessionKey('t', sessionId)))).map((e) => `${e.revision}:${e.type}:${e.id}`);
  /** The stored revision of client event `id`. */
  const revisionOf = async (sessionId: string, id: string) =>
    (await store.readStream(sessionStream(sessionKey('t', sessionId)))).find((e) => (e.data as { event?: { id?: string } }).event?.id === id)!.revision;
  const compact = (sessionId: string) =>
    new CompactSessionHandler(store, cache, new ExtractiveSummarizer(), noBus).execute(
      new CompactSessionCommand('t', sessionId, parseStrategy({ type: 'sliding-window', maxEvents: 2 }), null, 'chars', false),
    );
  const setPolicy = (sessionId: string) =>
    new SetCompactionPolicyHandler(store, cache, new ExtractiveSummarizer()).execute(
      new SetCompactionPolicyCommand('t', sessionId, parseStrategy({ type: 'sliding-window', maxEvents: 50 }), null, 'chars'),
    );
  /** A new process: its own cache, so its first command loads the session from the store (a snapshot after a compaction). */
  const otherProcess = () => new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus);

  /** m0..m4, then `between`, then m5, m6: the log of a client that sent two requests with a decision between them. */
  async function twoRequests(sessionId: string, between: (sessionId: string) => Promise<unknown>): Promise<void> {
    await appendAs(writer, sessionId, range(0, 5));
    await between(sessionId);
    await appendAs(writer, sessionId, range(5, 7));
  }

  async function expectRetry(sessionId: string, events: SessionEvent[], handler = writer, expectedRevision: ExpectedRevision = 'any'): Promise<void> {
    const before = await log(sessionId);
    const answer: AppendSessionEventsResult = await handler.execute(
      new AppendSessionEventsCommand(
        't',
        sessionId,
        events.map((event) => ({ event })),
        expectedRevision,
      ),
    );
    expect(answer.revision).toBe(String(await revisionOf(sessionId, events[events.length - 1].id)));
    expect(await log(sessionId)).toEqual(before);
  }

  async function expectRefused(sessionId: string, events: SessionEvent[], eventId: string): Promise<void> {
    const before = await log(sessionId);
    const refusal = await appendAs(writer, sessionId, events).then(
      () => null,
      (err: unknown) => err,
    );
    expect(refusal).toBeInstanceOf(DuplicateEventIdConflictError);
    expect(refusal).toMatchObject({ details: { eventId } });
    expect(await log(sessionId)).toEqual(before);
  }

  it.each([
    ['a compaction', compact],
    ['a policy set', setPolicy],
  ])('given %s between two requests, the whole history and a run spanning both requests are retries, in this process and another', async (_what, between) => {
    await twoRequests('s', between);
    // decisions do lie between the two requests' events
    expect((await revisionOf('s', 'm5')) - (await revisionOf('s', 'm4'))).toBeGreaterThan(1n);
    await expectRetry('s', range(0, 7));
    await expectRetry('s', range(3, 7));
    await expectRetry('s', range(4, 6));
    await expectRetry('s', range(0, 7), otherProcess());
    await expectRetry('s', range(4, 6), otherProcess());
  });

  it.each([
    ['a compaction', compact],
    ['a policy set', setPolicy],
  ])(
    'given %s between two requests chained by expectedRevision, a resend with the expected revision of its first event is a retry (newcomer ncrecheck64 F1)',
    async (_what, between) => {
      await twoRequests('s', between);
      // the second request as it was sent, at the revision the client last saw (the decision's)
      await expectRetry('s', range(5, 7), writer, (await revisionOf('s', 'm5')) - 1n);
      // the whole history as the first request was sent, and a run spanning both requests with the revision before it
      await expectRetry('s', range(0, 7), writer, 'no_stream');
      await expectRetry('s', range(3, 7), writer, await revisionOf('s', 'm2'));
      await expectRetry('s', range(0, 7), otherProcess(), 'no_stream');
    },
  );

  it('given more decisions between the requests than a client revision looks past (256), the whole history is still a retry, with no_stream too (newcomer ncrecheck64b N1)', async () => {
    for (let round = 0; round < 140; round++) {
      await appendAs(writer, 's', [m(2 * round), m(2 * round + 1)]);
      await compact('s');
    }
    const history = range(0, 280);
    expect((await revisionOf('s', 'm279')) - (await revisionOf('s', 'm0')) + 1n).toBeGreaterThan(280n + 256n);
    await expectRetry('s', history);
    await expectRetry('s', history, writer, 'no_stream');
    await expectRetry('s', history.slice(100), writer, (await revisionOf('s', 'm100')) - 1n);
  });

  it('given a compaction between two requests, a resend that skips a stored message, swaps two, or changes one is refused, nothing written', async () => {
    await twoRequests('s', compact);
    await expectRefused('s', [m(3), m(5)], 'm3');
    await expectRefused('s', [m(5), m(4)], 'm5');
    await expectRefused('s', [...range(0, 6), m(6, 'other text')], 'm6');
    // stored ones with a new one: still the 409 of a partial resend
    await expectRefused('s', [...range(4, 7), m(7)], 'm4');
  });
});
