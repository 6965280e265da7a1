/**
 * A compaction pass planned on one life of a session, whose session another replica erases and
 * another client writes again (with the same client ids) before the pass's decision is written:
 * the store refuses the decision for its life, and the pass is abandoned (passAuthority: `erased`):
 * it answers the erased session's 404 and writes nothing into the new life, neither rebased (a
 * rebase keeps the erased life's plan and summary of erased text whenever the new life holds the
 * same client ids) nor planned again (the command addressed the erased life).
 */
import type { EventBus } from '@nestjs/cqrs';
import { parseStrategy } from '@lib/compaction';
import { SqliteEventStore, type AppendOptions, type EventData, type EventStore } from '@lib/event-store';
import { recordedCompactionOf } from '../domain/session-window';
import { sessionKey, sessionStream } from '../events/session-stream-events';
import { ExtractiveSummarizer } from '../summarizers/extractive-summarizer';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { CompactSessionCommand, CompactSessionHandler } from './compact-session';
import { SessionStateCache } from './session-state-cache';
import { SessionNotFoundError } from '../errors';

const noBus = { publish: () => undefined } as unknown as EventBus;
const STREAM = sessionStream(sessionKey('t', 's'));
const IDS = ['u1', 'u2', 'u3', 'u4'];

describe('a compaction whose session is erased and written again before its decision is written', () => {
  let store: SqliteEventStore;
  beforeEach(() => {
    store = SqliteEventStore.open(':memory:');
  });
  afterEach(() => store.close());

  const sayAll = async (target: EventStore, text: string) => {
    const handler = new AppendSessionEventsHandler(target, new SessionStateCache(target), noBus);
    for (const id of IDS) await handler.execute(new AppendSessionEventsCommand('t', 's', [{ event: { id, type: 'user', text: `${text} ${id}` } }]));
  };

  it('is abandoned: the 404 of the erased session, and no decision in the new life', async () => {
    await sayAll(store, 'erased');
    let raced = false;
    const racing: EventStore = Object.assign(Object.create(store) as EventStore, {
      appendToStream: async (stream: string, events: EventData[], options?: AppendOptions) => {
        if (!raced) {
          raced = true;
          await store.deleteStream(STREAM);
          await sayAll(store, 'new');
        }
        return store.appendToStream(stream, events, options);
      },
    });
    const pass = new CompactSessionHandler(racing, new SessionStateCache(racing), new ExtractiveSummarizer()).execute(
      new CompactSessionCommand('t', 's', parseStrategy({ type: 'turn-window', maxTurns: 1 }), null, 'chars', false),
    );
    await expect(pass).rejects.toBeInstanceOf(SessionNotFoundError);
    // ncreplica F2: the message says the session was written again (it said "has not been written since", or "does not exist")
    const error = (await pass.catch((e: unknown) => e)) as SessionNotFoundError;
    expect(error.writtenAgain).toBe(true);
    expect(error.message).toMatch(/erased while this compaction ran and has been written again since/);
    expect(error.message).toMatch(/applied nothing to the session as written now/);
    expect(error.message).not.toMatch(/not been written since|does not exist/);
    expect(raced).toBe(true);
    const decisions = (await store.readStream(STREAM)).map((e) => recordedCompactionOf(e)).filter((d) => d !== null);
    expect(decisions).toEqual([]);
  });

  it('says when it was erased and that it was written again, in one message rule (with the erasure time the read models know)', () => {
    const error = new SessionNotFoundError('s', '2026-12-04T10:21:00.000Z', undefined, true);
    expect(error.message).toMatch(/^session "s" was erased at 2026-12-04T10:21:00.000Z while this compaction ran and has been written again since/);
    expect(error.message).not.toMatch(/not been written since/);
    expect(new SessionNotFoundError('s', '2026-12-04T10:21:00.000Z').message).toMatch(/and has not been written since/);
  });
});
