/**
 * Stopping a replica under NATS load (SIGTERM runs the same close): the commands it has started
 * finish and are acknowledged; the others are another replica's at once, not after
 * `NATS_ACK_WAIT_MS`: the replica pulls only for its free slots, so they wait in the stream (before
 * natspull it pulled ahead and gave those back with a nak at stop; commands it holds unstarted, queued behind
 * their session's running one, still go back so: nats-command-retry.e2e-spec.ts).
 * Against the machine's NATS server, with streams under a prefix of this file's own.
 */
import { randomUUID } from 'node:crypto';
import type { JsMsg } from '@nats-io/jetstream';
import { ControlledSummarizer, startService, type Harness } from '../support/service-harness';
import { describeWithNats, eventually, publishCommand, readStream, uniquePrefix, useNatsSuite, NATS_TEST_URL } from '../support/nats-test';
import { commandSubject, natsNames } from '../../apps/session-service/src/nats/nats-names';

jest.setTimeout(60_000);

const prefix = uniquePrefix();
const names = natsNames(prefix);
const SESSIONS = Array.from({ length: 6 }, (_, i) => `stop${i}`);
const env = { NATS_URL: NATS_TEST_URL, NATS_PREFIX: prefix, NATS_CONCURRENCY: '2', NATS_ACK_WAIT_MS: '30000' };

describeWithNats('NATS shutdown')('stopping a replica while it holds NATS commands', () => {
  let harness: Harness | undefined;
  const summarizer = new ControlledSummarizer();

  const nats = useNatsSuite('NATS shutdown', { prefixes: [prefix] });

  afterAll(async () => {
    summarizer.release();
    await harness?.stop();
    await nats.close();
  });

  it('leaves the commands not started to another replica at once, finishes the started ones, and each is answered once', async () => {
    harness = await startService({ env, summarizer });
    for (const session of SESSIONS) {
      await harness
        .http()
        .post(`/v1/sessions/${session}/events`)
        .send({ events: Array.from({ length: 6 }, (_, i) => ({ id: `e${i}`, type: i % 2 ? 'assistant' : 'user', text: `${session} text ${i}` })) })
        .expect(201);
    }
    const entered = summarizer.hold();
    const compact = { strategy: { type: 'rolling-summary', keepTurns: 1, summarizeAtTokens: 1 } };
    for (const session of SESSIONS) {
      await publishCommand(nats.client.js, commandSubject(prefix, 'default', session, 'compact'), compact, { msgId: `stop-${session}-${randomUUID()}` });
    }
    await entered;
    const unacked = async () => (await nats.client.jsm.consumers.info(names.commandStream, names.commandConsumer)).num_ack_pending;
    // Two commands are in the summarizer (NATS_CONCURRENCY 2); the others wait in the stream, none taken ahead.
    await eventually(() => summarizer.calls === 2, 10_000, 'two commands started');
    await new Promise((r) => setTimeout(r, 300));
    expect(await unacked()).toBe(2);

    const stopping = harness.stop();
    // Another replica (this test, on the shared consumer) gets the four others while the started two are still held.
    const other = await nats.client.js.consumers.get(names.commandStream, names.commandConsumer);
    const taken: JsMsg[] = [];
    const deadline = Date.now() + 5_000;
    while (new Set(taken.map((m) => m.subject)).size < SESSIONS.length - 2 && Date.now() < deadline) {
      for await (const m of await other.fetch({ max_messages: SESSIONS.length - 2, expires: 1000 })) taken.push(m);
    }
    for (const m of taken) m.nak();
    expect({ taken: [...new Set(taken.map((m) => m.subject.split('.')[3]))].sort(), started: summarizer.calls }).toEqual({
      taken: SESSIONS.slice(2),
      started: 2,
    });
    summarizer.release();
    await stopping;

    // The next replica (here the same data, started again) takes them at once, not after the 30 s ack wait.
    const started = Date.now();
    harness = await startService({ env, summarizer, dataDir: harness.dataDir });
    const answers = await readStream(nats.client, names.resultStream, `${prefix}.results.default.>`, SESSIONS.length, { timeoutMs: 15_000 });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(answers.map((a) => [a.subject.split('.').pop(), a.headers.Status]).sort()).toEqual(SESSIONS.map((s) => [s, '200']));
    expect(answers.filter((a) => a.headers['Delivery-Count'] === '1').map((a) => a.subject.split('.').pop())).toEqual(['stop0', 'stop1']);
    expect(summarizer.calls).toBe(SESSIONS.length);
  });
});
