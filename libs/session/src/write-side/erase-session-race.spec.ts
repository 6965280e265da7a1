/**
 * Erasure racing an append to the same session (DESIGN §2: the read models are a function of the
 * log). Whatever lands while an erasure runs, every replica's read models end equal to a rebuild
 * from the log as it is afterwards: no erased event left behind in one of them, and no event the
 * log still holds missing from one of them.
 */
import type { EventBus } from '@nestjs/cqrs';
import {
  EventStoreUnavailableError,
  SqliteEventStore,
  type AppendOptions,
  type DeleteStreamOptions,
  type EventData,
  type EventStore,
  type ReadStreamOptions,
} from '@lib/event-store';
import { sessionKey, sessionStream } from '../events/session-stream-events';
import { ReadModelStore } from '../read-side/read-model-store';
import { SessionProjector } from '../read-side/session-projector';
import { dumpReadModels } from '../read-side/read-model-dump';
import { getWindow } from '../read-side/queries/window-query';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { EraseSessionCommand, EraseSessionHandler, MAX_ERASE_ATTEMPTS, erasureStream } from './erase-session';
import { ErasureInterruptedError, SessionNotFoundError, UnknownToolCallError } from '../errors';
import type { SessionEvent } from '@lib/compaction';
import { SessionStateCache } from './session-state-cache';
import { ErasuresInProgress } from './erasures-in-progress';
import { CompactSessionCommand, CompactSessionHandler } from './compact-session';
import { parseStrategy, type SummaryRequest } from '@lib/compaction';
import type { Summarizer, SummarizerOutcome } from '../summarizers/summarizer';
import { ExtractiveSummarizer } from '../summarizers/extractive-summarizer';

const noBus = { publish: () => undefined } as unknown as EventBus;
const STREAM = sessionStream(sessionKey('t', 's'));

/** Two replicas' projectors following one store; the erasure runs on the first. */
async function twoReplicas(store: EventStore) {
  const projectors = [new SessionProjector(ReadModelStore.open(':memory:')), new SessionProjector(ReadModelStore.open(':memory:'))];
  for (const p of projectors) p.start(store);
  const caught = async () => {
    const head = await store.headPosition();
    for (const p of projectors) expect(await p.waitForPosition(head, 5000)).toBe(true);
  };
  return { projectors, caught };
}

/** What `store` holds of the read models, checkpoint aside (a rebuild stops at the last event left, a live projector past the deleted ones). */
function contentOf(store: ReadModelStore): Record<string, unknown[]> {
  const { projector_checkpoints: _checkpoint, ...content } = dumpReadModels(store);
  return content;
}

/** The read models a projector rebuilt from `store` holds now. */
async function rebuilt(store: EventStore): Promise<Record<string, unknown[]>> {
  const fresh = new SessionProjector(ReadModelStore.open(':memory:'));
  await fresh.rebuild(store);
  return contentOf(fresh.store);
}

const say = (append: AppendSessionEventsHandler, id: string) =>
  append.execute(new AppendSessionEventsCommand('t', 's', [{ event: { id, type: 'user', text: `text of ${id}` } }]));

describe('an erasure racing an append', () => {
  let store: SqliteEventStore;
  beforeEach(() => {
    store = SqliteEventStore.open(':memory:');
  });
  afterEach(async () => {
    await store.close();
  });

  /**
   * Runs an erasure of session `s` (after two events) on replica 0, with `meanwhile` run on the
   * erasure's way: `before` the stream is deleted or right `after`.
   */
  async function eraseWith(when: 'before' | 'after', meanwhile: (append: AppendSessionEventsHandler, projectors: SessionProjector[]) => Promise<unknown>) {
    const { projectors, caught } = await twoReplicas(store);
    const append = new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus);
    await say(append, 'u1');
    await say(append, 'u2');
    await caught();
    let raced = false;
    const racing: EventStore = Object.assign(Object.create(store) as EventStore, {
      deleteStream: async (stream: string, options?: DeleteStreamOptions) => {
        if (when === 'before' && !raced) {
          raced = true;
          await meanwhile(append, projectors);
        }
        await store.deleteStream(stream, options);
        if (when === 'after') await meanwhile(append, projectors);
      },
    });
    const erase = new EraseSessionHandler(racing, new SessionStateCache(racing), projectors[0]);
    await erase.execute(new EraseSessionCommand('t', 's'));
    await caught();
    const expected = await rebuilt(store);
    for (const [replica, p] of projectors.entries()) expect({ replica, ...contentOf(p.store) }).toEqual({ replica, ...expected });
    await Promise.all(projectors.map((p) => p.stop()));
    return projectors;
  }

  /** Appends `id` and waits until every replica projected it. */
  const projectedEverywhere = async (append: AppendSessionEventsHandler, projectors: SessionProjector[], id: string) => {
    const { position } = await say(append, id);
    for (const p of projectors) expect(await p.waitForPosition(BigInt(position), 5000)).toBe(true);
  };

  it('given an append acknowledged after the erasure began and projected everywhere, when the stream is deleted, then no replica keeps it', async () => {
    await eraseWith('before', (append, projectors) => projectedEverywhere(append, projectors, 'late'));
    expect(await store.readStream(STREAM)).toEqual([]);
  });

  it('given an append to the erased id right after the deletion, when the erasure ends, then every replica shows it (a new session)', async () => {
    const projectors = await eraseWith('after', (append, projectors) => projectedEverywhere(append, projectors, 'anew'));
    // Revisions are never reused: the new session continues after the erased one's (u1, u2).
    expect((await store.readStream(STREAM)).map((e) => e.revision)).toEqual([2n]);
    // Not only equal to a rebuild: the new session's event is in every window.
    for (const p of projectors) expect(getWindow(p.store, 't', 's')?.entries.map((e) => e.event.id)).toEqual(['anew']);
  });

  // Newcomer ncrace: with auto-compaction after every append, 6 appends during an erasure made it answer 409 ("8 times
  // in a row"): each append's pass wrote decisions that beat the deletion too. Only other writers' events count.
  it('given compactions deciding before every deletion, when they outnumber the attempts, then it still erases, the decisions too', async () => {
    const { projectors, caught } = await twoReplicas(store);
    try {
      const cache = new SessionStateCache(store);
      const append = new AppendSessionEventsHandler(store, cache, noBus);
      const events = 2 * MAX_ERASE_ATTEMPTS + 3;
      for (let n = 0; n < events; n++) await say(append, `u${n}`);
      const compact = new CompactSessionHandler(store, cache, new ExtractiveSummarizer());
      let passes = 0;
      const busy: EventStore = Object.assign(Object.create(store) as EventStore, {
        deleteStream: async (stream: string, options?: DeleteStreamOptions) => {
          if (passes < 2 * MAX_ERASE_ATTEMPTS) {
            passes++;
            // each pass archives one more event: only decisions land between the erasure's read and its deletion
            const strategy = parseStrategy({ type: 'sliding-window', maxEvents: events - passes });
            const answer = await compact.execute(new CompactSessionCommand('t', 's', strategy, null, 'chars', false));
            expect(answer).toMatchObject({ outcome: 'compacted', recorded: true });
          }
          return store.deleteStream(stream, options);
        },
      });
      const erased = await new EraseSessionHandler(busy, new SessionStateCache(busy), projectors[0]).execute(new EraseSessionCommand('t', 's'));
      expect(passes).toBe(2 * MAX_ERASE_ATTEMPTS);
      expect(await store.readStream(STREAM)).toEqual([]);
      expect(erased.erasedEvents).toBeGreaterThan(events + 2 * MAX_ERASE_ATTEMPTS);
      await caught();
    } finally {
      await Promise.all(projectors.map((p) => p.stop()));
    }
  });

  it("given appends landing before every deletion, when the attempts run out, then it answers erasure_interrupted (no expectedRevision of the client's: send the DELETE again) and erases nothing", async () => {
    const { projectors, caught } = await twoReplicas(store);
    const append = new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus);
    await say(append, 'u1');
    let n = 0;
    const busy: EventStore = Object.assign(Object.create(store) as EventStore, {
      deleteStream: async (stream: string, options?: DeleteStreamOptions) => {
        await say(append, `busy${n++}`);
        return store.deleteStream(stream, options);
      },
    });
    const refused = await new EraseSessionHandler(busy, new SessionStateCache(busy), projectors[0])
      .execute(new EraseSessionCommand('t', 's'))
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ErasureInterruptedError);
    expect(refused).toMatchObject({ code: 'erasure_interrupted' });
    expect((refused as Error).message).toMatch(/^other writers appended to the session each of the 8 times .*nothing was erased: send the DELETE again/);
    expect((refused as ErasureInterruptedError).details ?? {}).toEqual({});
    expect(n).toBe(MAX_ERASE_ATTEMPTS);
    expect(await store.readStream(STREAM)).toHaveLength(1 + MAX_ERASE_ATTEMPTS);
    expect(await store.readStream(erasureStream('t'))).toEqual([]);
    await caught();
    await Promise.all(projectors.map((p) => p.stop()));
  });

  // Newcomer ncapi73 F5: a burst of 8 appends sent with a DELETE to one process answered 409 erasure_interrupted in 1 of 3 runs.
  it('given a burst of appends to this process sent with the DELETE, when it runs, then those not yet writing wait for it and are refused session_erased, and it erases (never erasure_interrupted)', async () => {
    const { projectors, caught } = await twoReplicas(store);
    const erasures = new ErasuresInProgress();
    const append = new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus, null, null, erasures);
    await say(append, 'u1');
    const burst = Array.from({ length: 3 * MAX_ERASE_ATTEMPTS }, (_, n) => say(append, `b${n}`).catch((e: unknown) => e));
    // Each deletion comes a few milliseconds after its read of the revision: time for the next append of the burst to land.
    const slow: EventStore = Object.assign(Object.create(store) as EventStore, {
      deleteStream: async (stream: string, options?: DeleteStreamOptions) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        return store.deleteStream(stream, options);
      },
    });
    const erased = new EraseSessionHandler(slow, new SessionStateCache(slow), projectors[0], undefined, undefined, erasures).execute(
      new EraseSessionCommand('t', 's'),
    );
    expect((await erased).erasedEvents).toBeGreaterThanOrEqual(1);
    const answers = await Promise.all(burst);
    for (const answer of answers) if (answer instanceof Error) expect(answer).toMatchObject({ code: 'session_erased' });
    // most of the burst waited for the erasure: only the append writing when it began could race it
    expect(answers.filter((a) => a instanceof Error).length).toBeGreaterThan(MAX_ERASE_ATTEMPTS);
    expect(await store.readStream(STREAM)).toEqual([]);
    await caught();
    await Promise.all(projectors.map((p) => p.stop()));
  });

  it('given a compaction waiting for its summary, when the session is erased and re-created up to the same revision meanwhile, then the pass is abandoned and no erased content gets into the new session', async () => {
    const { projectors } = await twoReplicas(store);
    const cache = new SessionStateCache(store);
    const append = new AppendSessionEventsHandler(store, cache, noBus);
    for (let n = 0; n < 6; n++)
      await append.execute(new AppendSessionEventsCommand('t', 's', [{ event: { id: `old${n}`, type: 'user', text: `erased secret ${n}` } }]));
    let release: () => void = () => undefined;
    let called: () => void = () => undefined;
    let calls = 0;
    const summarizing = new Promise<void>((resolve) => (called = resolve));
    const held: Summarizer = {
      identity: { kind: 'extractive', model: 'held' },
      async summarize(request: SummaryRequest): Promise<SummarizerOutcome> {
        // The first call waits for the test; a pass planned again on the re-created session is answered at once.
        if (calls++ === 0) {
          called();
          await new Promise<void>((resolve) => (release = resolve));
        }
        return { ok: true, text: `summary: ${request.toSummarize.join(' ')}`, calls: 1, promptTokens: 1, completionTokens: 1 };
      },
    };
    const compaction = new CompactSessionHandler(store, cache, held)
      .execute(
        new CompactSessionCommand('t', 's', parseStrategy({ type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 1 }), null, 'chars', false),
      )
      .catch((e: unknown) => e);
    await summarizing;
    await new EraseSessionHandler(store, cache, projectors[0]).execute(new EraseSessionCommand('t', 's'));
    for (let n = 0; n < 6; n++) await append.execute(new AppendSessionEventsCommand('t', 's', [{ event: { id: `new${n}`, type: 'user', text: `kept ${n}` } }]));
    release();
    const answer = await compaction;
    // The pass belonged to the erased life (passAuthority: `erased`): abandoned with the session's 404, its model call
    // counted as discarded; nothing of it is written into the new life, which keeps its six events uncompacted.
    expect(answer).toBeInstanceOf(Error);
    expect(String(answer)).toMatch(/written again since.*discardedSummarizerCalls/);
    expect(calls).toBe(1);
    const log = JSON.stringify(await store.readStream(STREAM), (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value));
    expect(log).not.toContain('erased secret');
    expect(log).not.toContain('old');
    expect(log).not.toContain('summary:');
    await Promise.all(projectors.map((p) => p.stop()));
  });
  it('given a replica that cached the session, when another replica erases it and re-creates it up to the same revision, then an append through the first is decided on the new session', async () => {
    // Replica A's projector has not read the erasure record yet: only the log tells A.
    const a = new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus);
    const bCache = new SessionStateCache(store);
    const b = new AppendSessionEventsHandler(store, bCache, noBus);
    const projector = new SessionProjector(ReadModelStore.open(':memory:'));
    projector.start(store);
    const send = (handler: AppendSessionEventsHandler, events: SessionEvent[]) =>
      handler.execute(
        new AppendSessionEventsCommand(
          't',
          's',
          events.map((event) => ({ event })),
        ),
      );
    await send(a, [{ id: 'call', type: 'assistant', text: null, toolCalls: [{ id: 'c1', name: 'f', arguments: '{}' }] }]);
    await send(a, [{ id: 'u1', type: 'user', text: 'erased' }]);
    await new EraseSessionHandler(store, bCache, projector).execute(new EraseSessionCommand('t', 's'));
    await send(b, [{ id: 'n1', type: 'user', text: 'new session' }]);
    await send(b, [{ id: 'n2', type: 'user', text: 'still new' }]);
    const log = await store.readStream(STREAM);
    // The answer names a call of the erased session only: the new session has no such call.
    const answer = await send(a, [{ id: 't1', type: 'tool', responses: [{ toolCallId: 'c1', name: 'f', data: 'late' }] }]).catch((e: unknown) => e);
    expect(answer).toBeInstanceOf(UnknownToolCallError);
    expect(await store.readStream(STREAM)).toEqual(log);
    // And a call id of the erased session is free again in the new one.
    await send(a, [{ id: 'call2', type: 'assistant', text: null, toolCalls: [{ id: 'c1', name: 'f', arguments: '{}' }] }]);
    expect((await store.readStream(STREAM)).map((e) => e.id)).toHaveLength(3);
    await projector.stop();
  });
  it('given an erasure that deleted the stream and failed before its record, when it is sent again, then it writes the record and every replica erases the rows', async () => {
    const { projectors, caught } = await twoReplicas(store);
    const append = new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus);
    await say(append, 'u1');
    await say(append, 'u2');
    await caught();
    let failOnce = true;
    const failing: EventStore = Object.assign(Object.create(store) as EventStore, {
      appendToStream: (stream: string, events: EventData[], options?: AppendOptions) => {
        if (stream === erasureStream('t') && failOnce) {
          failOnce = false;
          return Promise.reject(new EventStoreUnavailableError('the store went away'));
        }
        return store.appendToStream(stream, events, options);
      },
    });
    // (it waits 100 ms for the record of the erasure that deleted the stream, then writes it)
    const erase = () => new EraseSessionHandler(failing, new SessionStateCache(failing), projectors[0], 100).execute(new EraseSessionCommand('t', 's'));
    await expect(erase()).rejects.toBeInstanceOf(EventStoreUnavailableError);
    expect(await store.readStream(STREAM)).toEqual([]);
    // Only the record is missing: the rows are still in every replica.
    for (const p of projectors) expect(getWindow(p.store, 't', 's')).not.toBeNull();
    // The record counts the events the interrupted erasure deleted (u1, u2).
    expect(await erase()).toMatchObject({ sessionId: 's', erasedEvents: 2 });
    expect(await store.readStream(erasureStream('t'))).toHaveLength(1);
    await caught();
    for (const p of projectors) expect(getWindow(p.store, 't', 's')).toBeNull();
    for (const p of projectors) expect(contentOf(p.store)).toEqual(await rebuilt(store));
    // Nothing left to erase: sent again, it answers as the erasure that finished it did, writing nothing.
    const finished = await erase();
    expect(finished).toMatchObject({ sessionId: 's', erasedEvents: 2 });
    expect(await store.readStream(erasureStream('t'))).toHaveLength(1);
    expect(finished.position).toBe((await store.readStream(erasureStream('t')))[0].position.toString());
    // A session id never written is 404.
    await expect(
      new EraseSessionHandler(store, new SessionStateCache(store), projectors[0]).execute(new EraseSessionCommand('t', 'never')),
    ).rejects.toBeInstanceOf(SessionNotFoundError);
    await Promise.all(projectors.map((p) => p.stop()));
  });
  it('given an erasure finishing another that deleted the stream, when the session id is written again meanwhile, then the new event stays in every replica', async () => {
    const { projectors, caught } = await twoReplicas(store);
    const append = new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus);
    await say(append, 'u1');
    await caught();
    // Another replica's erasure: the stream is deleted, its record not written yet.
    await store.deleteStream(STREAM);
    let appended = false;
    const racing: EventStore = Object.assign(Object.create(store) as EventStore, {
      readStream: async (stream: string, options?: ReadStreamOptions) => {
        const events = await store.readStream(stream, options);
        if (stream === STREAM && events.length === 0 && !appended) {
          // Right after this erasure found the stream empty: the id is written again, and projected.
          appended = true;
          await say(append, 'anew');
          await caught();
        }
        return events;
      },
    });
    // The record counts the erased life only (u1): 'anew' starts the next one.
    expect(await new EraseSessionHandler(racing, new SessionStateCache(racing), projectors[0], 100).execute(new EraseSessionCommand('t', 's'))).toMatchObject({
      erasedEvents: 1,
    });
    await caught();
    for (const p of projectors) expect(getWindow(p.store, 't', 's')?.entries.map((e) => e.event.id)).toEqual(['anew']);
    for (const p of projectors) expect(contentOf(p.store)).toEqual(await rebuilt(store));
    await Promise.all(projectors.map((p) => p.stop()));
  });
});
