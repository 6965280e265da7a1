/**
 * Every compaction answer carries `position` (the OpenAPI document declares it required, so a
 * client passes `minPosition: data.position` without a check; ncsdk repro 11): compacted, failed,
 * noop, not-triggered, dry run and replayed answers alike, with a store that tells positions and
 * with one that does not (a KurrentDB server answering none, -1n), where the answer names the log's
 * head after the pass (at or past what it saw) instead of leaving it out or answering "-1".
 */
import type { EventBus } from '@nestjs/cqrs';
import { parseStrategy, parseTrigger, type Strategy, type SummaryRequest, type Trigger } from '@lib/compaction';
import { SqliteEventStore, storeWith, type EventStore } from '@lib/event-store';
import type { Summarizer, SummarizerOutcome } from '../summarizers/summarizer';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { CompactSessionCommand, CompactSessionHandler } from './compact-session';
import { SessionStateCache } from './session-state-cache';

/** A summarizer answering every call with `ok` (a summary) or a failure. */
function scripted(ok: boolean): Summarizer {
  return {
    identity: { kind: 'extractive', model: 'scripted' },
    summarize: async (request: SummaryRequest): Promise<SummarizerOutcome> =>
      ok
        ? { ok: true, text: `recap of ${request.coveredIds.join(',')}`, calls: 1, promptTokens: 1, completionTokens: 1 }
        : { ok: false, reason: 'model down', calls: 1, promptTokens: 1, completionTokens: 0 },
  };
}

/** `store` as a server that tells no positions: every event read and every append answers position -1n. */
function withoutPositions(store: EventStore): EventStore {
  return storeWith(store, {
    readStream: async (...args) => (await store.readStream(...args)).map((e) => ({ ...e, position: -1n })),
    appendToStream: async (...args) => ({ ...(await store.appendToStream(...args)), position: -1n }),
  });
}

interface Case {
  name: string;
  outcome: string;
  strategy: Strategy;
  trigger?: Trigger;
  dryRun?: boolean;
  summarizerOk?: boolean;
  /** Asked twice by two processes at once: the second answer is the replay. */
  twice?: boolean;
}

const recursive = parseStrategy({ type: 'recursive-summarization', maxEventsToKeep: 3, overlapSize: 1 });
const CASES: Case[] = [
  { name: 'compacted', outcome: 'compacted', strategy: recursive },
  { name: 'failed (summarizer)', outcome: 'failed', strategy: recursive, summarizerOk: false },
  { name: 'noop', outcome: 'noop', strategy: parseStrategy({ type: 'sliding-window', maxEvents: 100 }) },
  { name: 'not-triggered', outcome: 'not-triggered', strategy: recursive, trigger: parseTrigger({ type: 'turn-count', maxTurns: 100 }) },
  { name: 'dry run', outcome: 'compacted', strategy: recursive, dryRun: true },
  { name: 'replayed', outcome: 'compacted', strategy: recursive, twice: true },
];

describe.each([
  ['a store that tells positions', (store: EventStore) => store],
  ['a store that tells no positions (-1n)', withoutPositions],
])('the position of every compaction answer, on %s', (_label, wrap) => {
  it.each(CASES)('$name: present, the position of the event it stands on (the log head here)', async (c) => {
    const sqlite = SqliteEventStore.open(':memory:');
    try {
      const store = wrap(sqlite);
      const append = new AppendSessionEventsHandler(store, new SessionStateCache(store), { publish: () => undefined } as unknown as EventBus);
      for (let n = 0; n < 8; n++)
        await append.execute(new AppendSessionEventsCommand('t', 's', [{ event: { id: `u${n}`, type: 'user', text: `question ${n}` } }]));
      const command = new CompactSessionCommand('t', 's', c.strategy, c.trigger ?? null, 'chars', c.dryRun ?? false);
      const handler = () => new CompactSessionHandler(store, new SessionStateCache(store), scripted(c.summarizerOk ?? true));
      const answers = c.twice ? await Promise.all([handler().execute(command), handler().execute(command)]) : [await handler().execute(command)];
      const head = await sqlite.headPosition();
      for (const answer of answers) {
        expect(answer.outcome).toBe(c.outcome);
        expect(answer.position).toMatch(/^(0|[1-9]\d*)$/);
        // nothing was appended after the pass: its last event (written or decided on) is the head
        expect(BigInt(answer.position)).toBe(head);
      }
      if (c.twice) expect(answers.some((a) => a.replayed)).toBe(true);
    } finally {
      await sqlite.close();
    }
  });
});
