/**
 * A NATS compact command sent again with the same command id after JetStream's duplicate window
 * (newcomer ncnats72 F3): the docs tell a client whose answer was lost to resend it with the same
 * `Nats-Msg-Id`. Its first delivery compacted the session; asked again (not a redelivery, so not
 * looked up before planning), a pass that would write nothing now answered a fresh `noop`, as if the
 * command had done nothing. It is answered with the decision it recorded, nothing written.
 */
import type { EventBus } from '@nestjs/cqrs';
import { parseStrategy } from '@lib/compaction';
import { SqliteEventStore } from '@lib/event-store';
import { ReadModelStore } from '../read-side/read-model-store';
import { SessionProjector } from '../read-side/session-projector';
import { ExtractiveSummarizer } from '../summarizers/extractive-summarizer';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { CompactSessionCommand, CompactSessionHandler } from './compact-session';
import { SessionStateCache } from './session-state-cache';

const sliding = parseStrategy({ type: 'sliding-window', maxEvents: 2 });

async function setUp() {
  const store = SqliteEventStore.open(':memory:');
  const readModels = ReadModelStore.open(':memory:');
  const cache = new SessionStateCache(store);
  const append = new AppendSessionEventsHandler(store, cache, { publish: () => undefined } as unknown as EventBus);
  const appendQuestions = async (from: number, to: number) => {
    for (let n = from; n < to; n++)
      await append.execute(new AppendSessionEventsCommand('t', 's', [{ event: { id: `u${n}`, type: 'user', text: `question ${n}` } }]));
  };
  await appendQuestions(0, 6);
  const compactions = new CompactSessionHandler(store, cache, new ExtractiveSummarizer(), undefined, undefined, undefined, readModels);
  const overNats = (commandId: string, redelivered = false) =>
    compactions.execute(new CompactSessionCommand('t', 's', sliding, null, 'chars', false, 'command', commandId, redelivered));
  const project = () => new SessionProjector(readModels).rebuild(store);
  return { store, readModels, overNats, project, appendQuestions };
}

describe('a NATS compact command sent again with its id after the duplicate window', () => {
  it('whose pass would write nothing now is answered with the decision it recorded, nothing written', async () => {
    const { store, readModels, overNats, project, appendQuestions } = await setUp();
    try {
      const first = await overNats('cmd-1');
      expect(first).toMatchObject({ outcome: 'compacted', recorded: true });
      // a later decision: the command's is no longer the session's last one
      await appendQuestions(6, 9);
      expect(await overNats('cmd-later')).toMatchObject({ outcome: 'compacted', recorded: true });
      await project();
      const log = await store.readStream('session-t.s');
      const again = await overNats('cmd-1');
      expect(again).toMatchObject({ outcome: 'compacted', replayed: true, compactionId: first.compactionId, archived: first.archived });
      expect(await store.readStream('session-t.s')).toEqual(log);
    } finally {
      await store.close();
      readModels.close();
    }
  });

  it('another command id asking the same is a new pass: its noop, nothing written', async () => {
    const { store, readModels, overNats, project } = await setUp();
    try {
      await overNats('cmd-1');
      await project();
      const again = await overNats('cmd-2');
      expect(again).toMatchObject({ outcome: 'noop', recorded: false });
      expect(again.replayed).toBeUndefined();
    } finally {
      await store.close();
      readModels.close();
    }
  });
});
