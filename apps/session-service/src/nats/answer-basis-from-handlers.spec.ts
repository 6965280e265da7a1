/**
 * The basis of a NATS answer is derived from what the command's handler did, not read before it
 * (answer-basis.ts): these run the executor with the real append handler on SQLite and a session
 * whose cached state is stale (another replica erased it and wrote it again, unseen by this
 * replica's cache). The answer must stand on the life the command was decided in — the store's
 * current one — whatever the cache held: not taken by the erasure of the life the cache still
 * showed, taken by the erasure of the life it was decided in. And no basis read of its own.
 */
import type { CommandBus, EventBus } from '@nestjs/cqrs';
import type { SessionEvent } from '@lib/compaction';
import { SqliteEventStore } from '@lib/event-store';
import {
  AppendSessionEventsCommand,
  AppendSessionEventsHandler,
  CompactSessionCommand,
  CompactSessionHandler,
  ExtractiveSummarizer,
  SessionStateCache,
  SetCompactionPolicyCommand,
  SetCompactionPolicyHandler,
  sessionKey,
  sessionStream,
  type ErasedRows,
} from '@lib/session';
import { requestSchemas } from '../http/request-schemas';
import * as answerBasis from './answer-basis';
import { NatsCommandExecutor } from './nats-command-executor';
import { commandSubject } from './nats-names';

const noBus = { publish: () => undefined } as unknown as EventBus;
const STREAM = sessionStream(sessionKey('t', 's'));
const user = (id: string): SessionEvent => ({ id, type: 'user', text: `message ${id}` });

function setUp() {
  const store = SqliteEventStore.open(':memory:');
  // This replica: its handler and cache serve the NATS commands.
  const cache = new SessionStateCache(store);
  const handler = new AppendSessionEventsHandler(store, cache, noBus);
  const summarizer = new ExtractiveSummarizer();
  const policy = new SetCompactionPolicyHandler(store, cache, summarizer);
  const compact = new CompactSessionHandler(store, cache, summarizer);
  const commandBus = {
    execute: (command: object) =>
      command instanceof AppendSessionEventsCommand
        ? handler.execute(command)
        : command instanceof SetCompactionPolicyCommand
          ? policy.execute(command)
          : compact.execute(command as CompactSessionCommand),
  } as unknown as CommandBus;
  const executor = new NatsCommandExecutor(commandBus, store, requestSchemas({ maxEventsPerRequest: 100, maxTextLength: 100_000 }), {
    prefix: 'smc',
    tenants: new Set(['t']),
    maxBodyBytes: 1 << 20,
  });
  let n = 0;
  const command = (kind: string, body: unknown, commandId = `c${n++}`, redelivered = false) =>
    executor.execute({ subject: commandSubject('smc', 't', 's', kind), data: new TextEncoder().encode(JSON.stringify(body)), commandId, redelivered });
  const send = (events: unknown[]) => command('append', { events });
  /** Another replica erases the session (its last revision returned) and writes it again, unseen by this replica's cache. */
  const otherReplicaErasesAndWritesAgain = async (id: string): Promise<bigint> => {
    const [last] = await store.readStream(STREAM, { direction: 'backwards', fromRevision: 'end', maxCount: 1 });
    await store.deleteStream(STREAM);
    const other = new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus);
    await other.execute(new AppendSessionEventsCommand('t', 's', [{ event: user(id) }]));
    return last.revision;
  };
  return { store, send, command, otherReplicaErasesAndWritesAgain };
}

/** Whether the erasure of the life whose last revision is `lastRevision` takes an answer decided on `basis`. */
const erasureOf = (lastRevision: bigint, basis: answerBasis.AnswerBasis | undefined) => {
  const rows: ErasedRows = { kind: 'upToRevision', lastRevision };
  return basis !== undefined && answerBasis.erasesAnswer({ position: 1_000n, rows }, basis);
};

describe('the basis of a NATS answer, from the handler', () => {
  afterEach(() => jest.restoreAllMocks());

  it('given a stale cached state, when an append is refused, then its basis is the state it was refused on, in the current life', async () => {
    const { store, send, otherReplicaErasesAndWritesAgain } = setUp();
    try {
      await send([user('u1')]);
      await send([user('u2')]); // now cached by this replica
      const erasedLife = await otherReplicaErasesAndWritesAgain('n1');
      // A response to a call no state holds: refused on the cached state, then again on the store's (as HTTP does).
      const refused = await send([{ id: 't1', type: 'tool', responses: [{ toolCallId: 'nowhere', name: 'lookup', data: 'x' }] }]);
      expect(refused).toMatchObject({ status: 422, body: { code: 'unknown_tool_call' } });
      const [current] = await store.readStream(STREAM, { direction: 'backwards', fromRevision: 'end', maxCount: 1 });
      expect(refused.basis).toEqual({ revision: current.revision, position: current.position, event: `${STREAM}@${current.revision}` });
      expect(erasureOf(erasedLife, refused.basis)).toBe(false);
      expect(erasureOf(current.revision, refused.basis)).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('given a stale cached state, when an append is written after the store refused it in the cached life, then its basis is the event it wrote', async () => {
    const { store, send, otherReplicaErasesAndWritesAgain } = setUp();
    try {
      await send([user('u1')]);
      await send([user('u2')]);
      const erasedLife = await otherReplicaErasesAndWritesAgain('n1');
      const read = jest.spyOn(answerBasis, 'readAnswerBasis');
      const written = await send([user('u3')]);
      expect(written.status).toBe(201);
      const { revision, position } = written.body as { revision: string; position: string };
      expect(written.basis).toEqual({ revision: BigInt(revision), position: BigInt(position), event: `${STREAM}@${revision}` });
      expect(erasureOf(erasedLife, written.basis)).toBe(false);
      expect(erasureOf(BigInt(revision), written.basis)).toBe(true);
      // Derived: no read of the basis before or after the command.
      expect(read).not.toHaveBeenCalled();
    } finally {
      await store.close();
    }
  });

  it('given a command refused on its message alone, then its basis is read once it is answered (the session as it is then)', async () => {
    const { store, send } = setUp();
    try {
      await send([user('u1')]);
      const refused = await send([{ id: 'x', type: 'nonsense' }]);
      expect(refused.status).toBe(400);
      const [last] = await store.readStream(STREAM, { direction: 'backwards', fromRevision: 'end', maxCount: 1 });
      expect(refused.basis).toEqual(await answerBasis.readAnswerBasis(store, STREAM));
      expect(refused.basis?.revision).toBe(last.revision);
    } finally {
      await store.close();
    }
  });

  it('given policy and compaction commands (one replayed on redelivery), then each basis is an event of the session where the answer says, read by none', async () => {
    const { store, send, command } = setUp();
    try {
      for (let i = 0; i < 4; i++) await send([user(`u${i}`), { id: `a${i}`, type: 'assistant', text: `answer ${i}` }]);
      const read = jest.spyOn(answerBasis, 'readAnswerBasis');
      const compaction = { strategy: { type: 'turn-window', maxTurns: 1 } };
      const answers = [
        await command('policy', { strategy: { type: 'turn-window', maxTurns: 2 }, trigger: null }),
        await command('policy', { strategy: { type: 'turn-window', maxTurns: 2 }, trigger: null }), // unchanged: the event in force
        await command('compact', compaction, 'k1'),
        await send([user('u9')]),
        await command('compact', compaction, 'k1', true), // replayed: on the state it loaded
      ];
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 201, 200]);
      expect(answers[4].body).toMatchObject({ replayed: true });
      const head = await store.headPosition();
      for (const answer of answers) {
        const basis = answer.basis!;
        const at = await store.eventAt(basis.position);
        expect({ stream: at?.streamId, revision: at?.revision }).toEqual({ stream: STREAM, revision: basis.revision });
        expect(await answerBasis.answerOfAnotherLog(store, basis, head)).toBe(false);
      }
      // The replayed compaction stands on the state it loaded (after u9), not on its decision's events.
      expect(answers[4].basis!.revision).toBe(BigInt((answers[3].body as { revision: string }).revision));
      expect(read).not.toHaveBeenCalled();
    } finally {
      await store.close();
    }
  });
});
