/**
 * A process that appends to and compacts a session live, keeping its state in memory, answers
 * every command exactly as a process restarted before each command (its state loaded from the
 * last compaction's snapshot and the events since): the same results and errors, and the same
 * events written. The live state keeps only the ids a restarted one knows (the active window and
 * the events since the last compaction); resends of events archived before that, exact or with
 * other content, native or with responses named from their calls, are found in the log on both.
 */
import fc from 'fast-check';
import type { EventBus } from '@nestjs/cqrs';
import { parseStrategy, type SessionEvent } from '@lib/compaction';
import { SqliteEventStore } from '@lib/event-store';
import { ExtractiveSummarizer } from '../summarizers/extractive-summarizer';
import { sessionKey, sessionStream, type ConversationEventData, type EventsArchivedData } from '../events/session-stream-events';
import { AppendSessionEventsCommand, AppendSessionEventsHandler, type ResponseNaming } from './append-session-events';
import { CompactSessionCommand, CompactSessionHandler } from './compact-session';
import { SessionStateCache } from './session-state-cache';

const noBus = { publish: () => undefined } as unknown as EventBus;
/** One event of a new request, its id given when the command runs: `answer` answers the last call sent unanswered (a user message when none). */
type Shape = { kind: 'user' | 'assistant' | 'call' | 'answer' };
type Command =
  | { kind: 'new'; events: Shape[]; owner: boolean }
  | { kind: 'resend'; pick: number; unnamed: boolean; changed: boolean; owner: boolean }
  | { kind: 'compact'; strategy: { type: 'sliding-window'; maxEvents: number } | { type: 'turn-window'; maxTurns: number } };

const shape: fc.Arbitrary<Shape> = fc.constantFrom<Shape>({ kind: 'user' }, { kind: 'assistant' }, { kind: 'call' }, { kind: 'answer' });
const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('new' as const), events: fc.array(shape, { minLength: 1, maxLength: 4 }), owner: fc.boolean() }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('resend' as const), pick: fc.nat(), unnamed: fc.boolean(), changed: fc.boolean(), owner: fc.boolean() }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('compact' as const),
      strategy: fc.oneof(
        fc.record({ type: fc.constant('sliding-window' as const), maxEvents: fc.integer({ min: 1, max: 4 }) }),
        fc.record({ type: fc.constant('turn-window' as const), maxTurns: fc.integer({ min: 1, max: 2 }) }),
      ),
    }),
  },
);

/** The event of `s` with client id `id`; `calls`: ids of the calls sent unanswered so far (updated). */
function eventOf(s: Shape, id: string, calls: string[]): SessionEvent {
  const answered = s.kind === 'answer' ? calls.pop() : undefined;
  switch (s.kind) {
    case 'assistant':
      return { id, type: 'assistant', text: `reply ${id}` };
    case 'call':
      calls.push(`k${id}`);
      return { id, type: 'assistant', text: null, toolCalls: [{ id: `k${id}`, name: 'lookup', arguments: '{}' }] };
    case 'answer':
      if (answered) return { id, type: 'tool', responses: [{ toolCallId: answered, name: 'lookup', data: `result ${id}` }] };
      return { id, type: 'user', text: `question ${id}` };
    default:
      return { id, type: 'user', text: `question ${id}` };
  }
}

/** A process's handlers: `live` keeps one cache for the whole run; otherwise every command gets a fresh one (a restart). */
function process(store: SqliteEventStore, live: boolean) {
  const shared = new SessionStateCache(store);
  const cache = () => (live ? shared : new SessionStateCache(store));
  const compactor = new CompactSessionHandler(store, shared, new ExtractiveSummarizer());
  return {
    append: (events: SessionEvent[], userId: string | undefined, naming: ResponseNaming) =>
      new AppendSessionEventsHandler(store, cache(), noBus).execute(
        new AppendSessionEventsCommand(
          't',
          's',
          events.map((event) => ({ event })),
          'any',
          userId,
          naming,
        ),
      ),
    compact: (strategy: unknown) =>
      (live ? compactor : new CompactSessionHandler(store, cache(), new ExtractiveSummarizer())).execute(
        new CompactSessionCommand('t', 's', parseStrategy(strategy), null, 'chars', false),
      ),
  };
}

/** Runs `commands` on a new store; the answers (result, or the error's name) and the log (types, client ids, archived ids). */
async function run(commands: Command[], live: boolean): Promise<{ answers: unknown[]; log: unknown[] }> {
  const store = SqliteEventStore.open(':memory:');
  try {
    const on = process(store, live);
    const sent: SessionEvent[][] = [];
    const answers: unknown[] = [];
    const calls: string[] = [];
    let next = 0;
    for (const c of commands) {
      let answer: Promise<unknown>;
      if (c.kind === 'compact') {
        answer = on.compact(c.strategy).then(({ outcome, archived, kept, summary, revision, position, recorded }) => ({
          outcome,
          archived,
          kept,
          summary: summary?.text,
          revision,
          position,
          recorded,
        }));
      } else if (c.kind === 'new' || sent.length === 0) {
        const events = (c.kind === 'new' ? c.events : [{ kind: 'user' as const }]).map((s) => eventOf(s, `e${next++}`, calls));
        sent.push(events);
        answer = on.append(events, c.owner ? 'al' : undefined, 'as-sent');
      } else {
        const original = sent[c.pick % sent.length];
        const events = original.map((e, i) => {
          if (c.changed && i === 0)
            return e.type === 'tool' ? { ...e, responses: e.responses.map((r) => ({ ...r, data: 'changed' })) } : { ...e, text: 'changed' };
          return c.unnamed && e.type === 'tool' ? { ...e, responses: e.responses.map((r) => ({ ...r, name: '' })) } : e;
        });
        answer = on.append(events, c.owner ? 'al' : undefined, c.unnamed ? 'from-calls' : 'as-sent');
      }
      answers.push(await answer.catch((err: Error) => ({ error: err.name, message: err.message })));
    }
    const log = (await store.readStream(sessionStream(sessionKey('t', 's')))).map((e) => [
      e.revision,
      e.type,
      (e.data as Partial<ConversationEventData>).event ?? null,
      (e.data as Partial<EventsArchivedData>).archivedIds ?? null,
    ]);
    return { answers, log };
  } finally {
    await store.close();
  }
}

describe('a session appended to and compacted live, against a process restarted before every command', () => {
  it('answers every command the same and writes the same events, resends of archived events included', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 4, maxLength: 30 }), async (commands) => {
        const live = await run(commands, true);
        const restarted = await run(commands, false);
        expect(live.answers).toEqual(restarted.answers);
        expect(live.log).toEqual(restarted.log);
      }),
      { numRuns: 60 },
    );
  });
});
