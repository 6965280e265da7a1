/**
 * A NATS command that meets a transient server-side condition (503 `store_unavailable`: the store
 * is down, e.g. a PostgreSQL failover) is neither dropped nor reordered: the consumer holds it and
 * retries it in place for as long as the condition lasts, the session's later commands wait behind
 * it, and each is applied once, in order, when the store is back. A 500 keeps a bounded number of
 * attempts. At stop, a waiting command and the one queued behind it go back to JetStream in order.
 *
 * The consumer runs against the machine's NATS server (streams under a prefix of each test's own)
 * with a stand-in executor whose "store" is switched off and on by the test; retries are spaced
 * 50–200 ms apart instead of 0.5–5 s so that an outage longer than the old retry budget (5 attempts)
 * takes a few seconds. `test/slow/nats-postgres-outage.slow-spec.ts` does the same with the real
 * service on a PostgreSQL cluster that is stopped.
 */
import { Logger } from '@nestjs/common';
import { NatsCommandConsumer, MAX_ATTEMPTS } from '../../apps/session-service/src/nats/nats-command-consumer';
import type { CommandAnswer, CommandMessage } from '../../apps/session-service/src/nats/nats-command-executor';
import { commandSubject, natsNames, parseCommandSubject, type NatsNames } from '../../apps/session-service/src/nats/nats-names';
import { ensureStreams } from '../../apps/session-service/src/nats/nats-streams';
import { describeWithNats, eventually, publishCommand, readStream, useNatsSuite } from '../support/nats-test';

jest.setTimeout(60_000);

const ACK_WAIT_MS = 2_000;
const BACKOFF = { initialMs: 50, maxMs: 200 };

/** One call of the stand-in executor. */
interface Call {
  commandId: string;
  redelivered: boolean;
  /** What the store did: applied the command, found it applied already, or was down / failed. */
  outcome: 'applied' | 'already-applied' | 'down' | 'internal';
}

/**
 * A stand-in for the executor over a "store" the test switches off and on: while `down`, every
 * command is answered 503 `store_unavailable` (nothing written), as the real executor answers
 * when PostgreSQL does not answer; a command id listed in `poison` always fails with 500
 * `internal`. Otherwise the command is applied once (a second attempt finds it applied).
 */
class StandInExecutor {
  down = false;
  readonly poison = new Set<string>();
  readonly calls: Call[] = [];
  /** Command ids in the order the store applied them. */
  readonly applied: string[] = [];

  constructor(private readonly prefix: string) {}

  async execute(message: CommandMessage): Promise<CommandAnswer> {
    await new Promise((r) => setTimeout(r, 5));
    const address = parseCommandSubject(this.prefix, message.subject) ?? undefined;
    const call = (outcome: Call['outcome']) => this.calls.push({ commandId: message.commandId, redelivered: message.redelivered, outcome });
    if (this.poison.has(message.commandId)) {
      call('internal');
      return { status: 500, body: { code: 'internal', message: 'internal error; the request may be retried' }, kind: 'append', address };
    }
    if (this.down) {
      call('down');
      return {
        status: 503,
        body: { code: 'store_unavailable', message: 'the event store is unavailable; retry later', mayHaveBeenWritten: false },
        kind: 'append',
        address,
      };
    }
    call(this.applied.includes(message.commandId) ? 'already-applied' : 'applied');
    if (!this.applied.includes(message.commandId)) this.applied.push(message.commandId);
    return { status: 201, body: { revision: String(this.applied.length) }, kind: 'append', address };
  }

  attemptsOf(commandId: string): Call[] {
    return this.calls.filter((c) => c.commandId === commandId);
  }
}

describeWithNats('NATS command retry')('NATS commands meeting a store outage', () => {
  const consumers: NatsCommandConsumer[] = [];
  const logged: string[] = [];

  const nats = useNatsSuite('NATS command retry');

  beforeEach(() => {
    logged.length = 0;
    for (const level of ['log', 'warn'] as const) {
      jest.spyOn(Logger.prototype, level).mockImplementation((...args: unknown[]) => {
        logged.push(String(args[0]));
      });
    }
  });

  afterEach(async () => {
    jest.restoreAllMocks();
    for (const consumer of consumers.splice(0)) await consumer.stop();
  });

  afterAll(async () => {
    await nats.close();
  });

  /** Streams and the shared consumer under a new prefix, and a consumer over a stand-in executor. */
  async function setUp(): Promise<{ names: NatsNames; executor: StandInExecutor; consumer: NatsCommandConsumer; subject: (session: string) => string }> {
    const prefix = nats.prefix();
    const names = natsNames(prefix);
    await ensureStreams(nats.client.jsm, names, ACK_WAIT_MS);
    const executor = new StandInExecutor(prefix);
    const consumer = new NatsCommandConsumer(nats.nc, nats.client.js, nats.client.jsm, executor, names, 4, ACK_WAIT_MS, false, BACKOFF);
    consumers.push(consumer);
    await consumer.start();
    return { names, executor, consumer, subject: (session) => commandSubject(prefix, 'default', session, 'append') };
  }

  it('holds a command through an outage longer than the old retry budget and the ack wait, then applies it and the session’s next one, in order, each once', async () => {
    const { names, executor, consumer, subject } = await setUp();
    executor.down = true;
    await publishCommand(nats.client.js, subject('conv'), { events: [] }, { msgId: 'c1' });
    await publishCommand(nats.client.js, subject('conv'), { events: [] }, { msgId: 'c2' });
    await publishCommand(nats.client.js, subject('other'), { events: [] }, { msgId: 'o1' });
    // Down for more attempts than MAX_ATTEMPTS and more than twice the ack wait.
    const downSince = Date.now();
    await eventually(
      () => executor.attemptsOf('c1').length > MAX_ATTEMPTS + 2 && Date.now() - downSince > 2.5 * ACK_WAIT_MS,
      30_000,
      `c1 tried more than ${MAX_ATTEMPTS + 2} times during a ${2.5 * ACK_WAIT_MS} ms outage`,
    );
    // Two sessions' first commands wait; the second command of `conv` was never tried: it waits behind c1.
    expect(consumer.retrying).toBe(2);
    expect(executor.attemptsOf('c2')).toEqual([]);
    expect(logged.filter((line) => line.includes('"c1" waits'))).toHaveLength(1);

    executor.down = false;
    const answers = await readStream(nats.client, names.resultStream, `${names.prefix}.results.default.>`, 3);
    expect(answers.map((a) => [a.headers['Command-Id'], a.headers.Status, a.headers['Delivery-Count']]).sort()).toEqual([
      ['c1', '201', '1'],
      ['c2', '201', '1'],
      ['o1', '201', '1'],
    ]);
    // c1 before c2 (same session); each applied once; after its first attempt c1 ran as a redelivery.
    expect(executor.applied.filter((id) => id !== 'o1')).toEqual(['c1', 'c2']);
    expect(executor.calls.filter((c) => c.outcome === 'applied').map((c) => c.commandId)).toHaveLength(3);
    expect(
      executor
        .attemptsOf('c1')
        .slice(1)
        .every((c) => c.redelivered),
    ).toBe(true);
    expect(executor.attemptsOf('c2')).toEqual([{ commandId: 'c2', redelivered: false, outcome: 'applied' }]);
    expect(consumer.retrying).toBe(0);
    expect(logged.filter((line) => line.includes('"c1" went through'))).toHaveLength(1);
    // Nothing terminated, nothing redelivered by JetStream (the held commands were reported in progress), the stream is empty.
    await eventually(async () => (await nats.client.jsm.streams.info(names.commandStream)).state.messages === 0, 10_000, 'the command stream to empty');
    const info = await nats.client.jsm.consumers.info(names.commandStream, names.commandConsumer);
    expect({ pending: info.num_pending, unacked: info.num_ack_pending, redelivered: info.num_redelivered }).toEqual({ pending: 0, unacked: 0, redelivered: 0 });
  });

  it('terminates a command failing with 500 after MAX_ATTEMPTS attempts, its error published, and applies the session’s next one after it', async () => {
    const { names, executor, subject } = await setUp();
    executor.poison.add('bad');
    await publishCommand(nats.client.js, subject('conv'), { events: [] }, { msgId: 'bad' });
    await publishCommand(nats.client.js, subject('conv'), { events: [] }, { msgId: 'next' });
    const answers = await readStream(nats.client, names.resultStream, `${names.prefix}.results.default.conv`, 2);
    expect(answers.map((a) => [a.headers['Command-Id'], a.headers.Status, a.body.code])).toEqual([
      ['bad', '500', 'internal'],
      ['next', '201', undefined],
    ]);
    expect(executor.attemptsOf('bad')).toHaveLength(MAX_ATTEMPTS);
    // `next` was tried only once `bad` had its final answer.
    const lastBad = executor.calls.map((c) => c.commandId).lastIndexOf('bad');
    expect(executor.calls.findIndex((c) => c.commandId === 'next')).toBeGreaterThan(lastBad);
    await eventually(async () => (await nats.client.jsm.streams.info(names.commandStream)).state.messages === 0, 10_000, 'the command stream to empty');
  });

  it('at stop, gives a waiting command and the one queued behind it back to JetStream, in their order, unanswered', async () => {
    const { names, executor, consumer, subject } = await setUp();
    executor.down = true;
    await publishCommand(nats.client.js, subject('conv'), { events: [] }, { msgId: 'w1' });
    await publishCommand(nats.client.js, subject('conv'), { events: [] }, { msgId: 'w2' });
    await eventually(() => consumer.retrying === 1, 10_000, 'w1 to wait');
    await eventually(async () => (await nats.client.jsm.consumers.info(names.commandStream, names.commandConsumer)).num_ack_pending === 2, 10_000, 'w2 taken');
    const stopStarted = Date.now();
    await consumer.stop();
    consumers.splice(consumers.indexOf(consumer), 1);
    expect(Date.now() - stopStarted).toBeLessThan(ACK_WAIT_MS);
    expect(executor.attemptsOf('w2')).toEqual([]);

    // Another replica (this test) takes both at once, w1 first, neither terminated nor answered.
    const other = await nats.client.js.consumers.get(names.commandStream, names.commandConsumer);
    const taken: string[] = [];
    const deadline = Date.now() + 5_000;
    while (taken.length < 2 && Date.now() < deadline) {
      for await (const m of await other.fetch({ max_messages: 2, expires: 1000 })) {
        taken.push(m.headers?.get('Nats-Msg-Id') ?? '?');
        m.ack();
      }
    }
    expect(taken).toEqual(['w1', 'w2']);
    expect((await nats.client.jsm.streams.info(names.resultStream)).state.messages).toBe(0);
  });
});
