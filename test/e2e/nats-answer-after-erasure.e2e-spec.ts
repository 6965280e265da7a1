/**
 * The race an erasure of the results stream alone leaves open: a command decided on a session's
 * life, whose answer is stored in the results stream only after the decisions feed has handled
 * that life's erasure record (its deletion found nothing to delete yet). The consumer checks the
 * erasure records the feed handled (`HandledErasures`) once the answer is stored and deletes it
 * at once; an answer of the session written again after the erasure stays. Made deterministic by
 * the stand-in executor: the feed's handling of the record (noted, then `eraseSessionCopies`, as
 * `DecisionFeedPublisher` does) runs after the command is decided and before its answer is
 * published. Needs NATS at `NATS_TEST_URL` (own prefix).
 */
import type { StoredMsg } from '@nats-io/jetstream';
import { NatsCommandConsumer, type HandledCommand } from '../../apps/session-service/src/nats/nats-command-consumer';
import type { CommandAnswer, CommandMessage, NatsCommandExecutor } from '../../apps/session-service/src/nats/nats-command-executor';
import { commandSubject, natsNames, parseCommandSubject, resultSubject, type NatsNames } from '../../apps/session-service/src/nats/nats-names';
import { ensureStreams } from '../../apps/session-service/src/nats/nats-streams';
import { eraseSessionCopies } from '../../apps/session-service/src/nats/nats-erasure';
import { HandledErasures } from '../../apps/session-service/src/nats/handled-erasures';
import type { AnswerBasis } from '../../apps/session-service/src/nats/answer-basis';
import { describeWithNats, publishCommand, useNatsSuite } from '../support/nats-test';

jest.setTimeout(30_000);

/** The erasure record of the life whose last revision is 3 (at global position 10). */
const ERASURE = { position: 10n, rows: { kind: 'upToRevision' as const, lastRevision: 3n } };

describeWithNats('NATS answer after erasure')('an answer stored after the feed handled its life’s erasure', () => {
  const nats = useNatsSuite('NATS answer after erasure', { quiet: true });
  const consumers: NatsCommandConsumer[] = [];
  afterEach(async () => {
    for (const consumer of consumers.splice(0)) await consumer.stop();
  });
  afterAll(() => nats.close());

  /**
   * A consumer over an executor that decides every command on `basis`, then lets the feed handle
   * ERASURE of session `s` (noted in `erasures`, then its copies deleted) before the answer is published.
   */
  async function answerAfterFeed(basis: AnswerBasis): Promise<{ names: NatsNames; left: () => Promise<StoredMsg[]> }> {
    const prefix = nats.prefix();
    const names = natsNames(prefix);
    await ensureStreams(nats.client.jsm, names, 5_000);
    const erasures = new HandledErasures();
    const executor = {
      execute: async (message: CommandMessage): Promise<CommandAnswer> => {
        const address = parseCommandSubject(prefix, message.subject) ?? undefined;
        // The feed reaches the record now: nothing of the session in the results stream yet.
        erasures.noted('default', 's', ERASURE);
        await eraseSessionCopies(nats.client.jsm, names, 'default', 's', ERASURE, () => Promise.resolve(false));
        return { status: 201, body: { revision: basis.revision.toString(), position: basis.position.toString() }, kind: 'append', address, basis };
      },
    } as unknown as NatsCommandExecutor;
    let handled!: (h: HandledCommand) => void;
    const done = new Promise<HandledCommand>((resolve) => (handled = resolve));
    const consumer = new NatsCommandConsumer(
      nats.nc,
      nats.client.js,
      nats.client.jsm,
      executor,
      names,
      1,
      5_000,
      false,
      undefined,
      undefined,
      handled,
      erasures,
    );
    consumers.push(consumer);
    await consumer.start();
    await publishCommand(nats.client.js, commandSubject(prefix, 'default', 's', 'append'), { events: [] }, { msgId: 'c1' });
    expect(await done).toMatchObject({ outcome: 'ok' });
    const left = async () => {
      const out: StoredMsg[] = [];
      for (let seq = 1; ;) {
        const m = await nats.client.jsm.streams.getMessage(names.resultStream, { seq, next_by_subj: resultSubject(prefix, 'default', 's') } as never);
        if (!m) return out;
        out.push(m);
        seq = m.seq + 1;
      }
    };
    return { names, left };
  }

  it('given an answer decided on the erased life, when it is stored after the feed handled the erasure, then it is deleted at once', async () => {
    const { left } = await answerAfterFeed({ revision: 3n, position: 9n, event: 'session-default:s@3' });
    expect(await left()).toEqual([]);
  });

  it('given an answer of the session written again after the erasure, when it is stored after the feed handled the erasure, then it stays', async () => {
    const { left } = await answerAfterFeed({ revision: 4n, position: 11n, event: 'session-default:s@4' });
    expect((await left()).map((m) => m.header.get('Session-Revision'))).toEqual(['4']);
  });
});
