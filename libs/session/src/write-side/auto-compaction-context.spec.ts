/**
 * Every automatic pass runs in the async context of the append that last asked for it, so its log
 * lines (the request-scoped logger lives in an AsyncLocalStorage) carry that append's request id.
 * Before, a run's later passes, asked for by later appends while one ran, kept the context of the
 * append that started the run (newcomer ncllmfaults F7: a later pass's lines named an earlier
 * request).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { CommandBus, EventBus } from '@nestjs/cqrs';
import { parseStrategy, parseTrigger, type SummaryRequest } from '@lib/compaction';
import { SqliteEventStore } from '@lib/event-store';
import type { Summarizer, SummarizerOutcome } from '../summarizers/summarizer';
import { AppendSessionEventsCommand, AppendSessionEventsHandler, SessionEventsAppended } from './append-session-events';
import { AutoCompactionScheduler, DEFAULT_SESSION_SETTINGS } from './auto-compaction';
import { CompactSessionHandler } from './compact-session';
import type { CompactSessionCommand } from './compact-session-command';
import { SessionStateCache } from './session-state-cache';
import { SetCompactionPolicyCommand, SetCompactionPolicyHandler } from './set-compaction-policy';

/** Stands for the request-scoped logger's store: the request id of the append being handled. */
const requestContext = new AsyncLocalStorage<string>();

it("a run's later pass runs in the context of the append that asked for it, not the run's first", async () => {
  const store = SqliteEventStore.open(':memory:');
  let releaseFirst!: () => void;
  const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
  /** The request id each model call was made under. */
  const calledUnder: Array<string | undefined> = [];
  const summarizer: Summarizer = {
    identity: { kind: 'extractive', model: 'context-recording' },
    async summarize(request: SummaryRequest): Promise<SummarizerOutcome> {
      calledUnder.push(requestContext.getStore());
      if (calledUnder.length === 1) await firstHeld;
      return { ok: true, text: `recap of ${request.coveredIds.length}`, calls: 1, promptTokens: 10, completionTokens: 5 };
    },
  };
  const cache = new SessionStateCache(store);
  const compact = new CompactSessionHandler(store, cache, summarizer, { publish: () => undefined } as unknown as EventBus);
  const commandBus = { execute: (command: CompactSessionCommand) => compact.execute(command) } as unknown as CommandBus;
  const scheduler = new AutoCompactionScheduler(commandBus, cache, DEFAULT_SESSION_SETTINGS, { publish: () => undefined } as unknown as EventBus);
  const bus = { publish: (e: unknown) => e instanceof SessionEventsAppended && scheduler.handle(e) } as unknown as EventBus;
  const append = new AppendSessionEventsHandler(store, cache, bus);
  const say = (requestId: string, n: number) =>
    requestContext.run(requestId, () =>
      append.execute(new AppendSessionEventsCommand('t', 's', [{ event: { id: `${requestId}-u${n}`, type: 'user', text: `user text ${requestId} ${n}` } }])),
    );
  try {
    await new SetCompactionPolicyHandler(store, cache, summarizer).execute(
      new SetCompactionPolicyCommand(
        't',
        's',
        parseStrategy({ type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 0 }),
        parseTrigger({ type: 'turn-count', maxTurns: 3 }),
        'chars',
      ),
    );
    for (let n = 0; n < 4; n++) await say('req-1', n); // over 3 turns: the run starts, its model call held
    for (let i = 0; i < 200 && calledUnder.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    for (let n = 0; n < 4; n++) await say('req-2', n); // asks for another pass while the first runs
    releaseFirst();
    for (let i = 0; i < 200 && calledUnder.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    await scheduler.whenIdle();
    // was ['req-1', 'req-1']: the second pass ran (and logged) under the first append's request
    expect(calledUnder).toEqual(['req-1', 'req-2']);
  } finally {
    await scheduler.whenIdle();
    await store.close();
  }
});
