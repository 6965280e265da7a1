/**
 * The write-side state a process keeps for a session it appends to live is bounded by the active
 * window and the events since the last compaction, not by the session's history (capacity report
 * finding 1; docs/performance.md and memory plan): the ids it knows are exactly those a load
 * from the last compaction's snapshot knows (what a restarted process holds), however many events
 * this process appended and compacted away.
 */
import type { EventBus } from '@nestjs/cqrs';
import { parseStrategy, type SessionEvent } from '@lib/compaction';
import { SqliteEventStore } from '@lib/event-store';
import { ExtractiveSummarizer } from '../summarizers/extractive-summarizer';
import { sessionKey } from '../events/session-stream-events';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { CompactSessionCommand, CompactSessionHandler } from './compact-session';
import { SessionStateCache } from './session-state-cache';
import { loadSessionWindow } from './session-loader';

const noBus = { publish: () => undefined } as unknown as EventBus;
const KEY = sessionKey('t', 'long');

describe('the cached state of a session appended to live', () => {
  let store: SqliteEventStore;
  let cache: SessionStateCache;
  let appender: AppendSessionEventsHandler;
  let compactor: CompactSessionHandler;
  beforeEach(() => {
    store = SqliteEventStore.open(':memory:');
    cache = new SessionStateCache(store);
    appender = new AppendSessionEventsHandler(store, cache, noBus);
    compactor = new CompactSessionHandler(store, cache, new ExtractiveSummarizer());
  });
  afterEach(() => store.close());

  const batch = (from: number, n: number) =>
    Array.from({ length: n }, (_, j): { event: SessionEvent } => {
      const k = from + j;
      return { event: k % 2 ? { id: `e${k}`, type: 'assistant', text: `reply ${k}` } : { id: `e${k}`, type: 'user', text: `question ${k}` } };
    });
  const compact = (strategy: unknown) => compactor.execute(new CompactSessionCommand('t', 'long', parseStrategy(strategy), null, 'chars', false));

  it.each([
    { strategy: { type: 'sliding-window', maxEvents: 10 }, kind: 'without summaries' },
    { strategy: { type: 'turn-window', maxTurns: 2 }, kind: 'with a summary in the window' },
  ])(
    'given 40 batches of 25 events each compacted $kind, then the ids it knows are those of a restarted process, never more than the window and the events since',
    async ({ strategy }) => {
      let appended = 0;
      for (let b = 0; b < 40; b++) {
        await appender.execute(new AppendSessionEventsCommand('t', 'long', batch(appended, 25)));
        appended += 25;
        const live = (await cache.load(KEY))!;
        // Between compactions: the window and the events since the last one.
        expect(live.revisionsById.size).toBeLessThanOrEqual(live.active.size + live.eventsSinceCompaction);
        expect((await compact(strategy)).outcome).toBe('compacted');

        const compacted = (await cache.load(KEY))!;
        const restarted = (await loadSessionWindow(store, KEY))!;
        expect(compacted.revision).toBe(restarted.revision);
        expect([...compacted.revisionsById].sort()).toEqual([...restarted.revisionsById].sort());
        expect(compacted.revisionsById.size).toBe(compacted.active.size);
      }
      expect(appended).toBe(1000);
    },
  );
});
