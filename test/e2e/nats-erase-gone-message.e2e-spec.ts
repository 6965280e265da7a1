/**
 * Deleting a message another replica (or a work queue's acknowledgement) deleted first is no failure (newcomer ncrecheck66
 * F5): nats-server 2.9 answers `no message found` (JetStream error 10057) to `STREAM.MSG.DELETE` of such a sequence, and
 * the decisions feed, erasing a session's copies while other replicas erased them too, paused on it ("decision feed paused
 * … no message found"). Runs against the machine's NATS server, on streams of its own prefix.
 */
import { describeWithNats, useNatsSuite } from '../support/nats-test';
import { eraseMessage, eraseSubjectMessages } from '../../apps/session-service/src/nats/nats-erasure';
import { natsNames } from '../../apps/session-service/src/nats/nats-names';

describeWithNats('NATS: deleting a message already gone')('erasing a deleted NATS message', () => {
  const nats = useNatsSuite('NATS erase gone message');
  afterAll(() => nats.close());

  const streamWith = async (count: number) => {
    // The prefix's results stream (the suite deletes it afterwards).
    const prefix = nats.prefix();
    const stream = natsNames(prefix).resultStream;
    await nats.client.jsm.streams.add({ name: stream, subjects: [`${prefix}.results.>`] });
    const seqs: number[] = [];
    for (let i = 0; i < count; i++) seqs.push((await nats.client.js.publish(`${prefix}.results.default.s1`, `message ${i}`)).seq);
    return { stream, subject: `${prefix}.results.default.s1`, seqs };
  };

  it('given a message deleted already, when it is erased again, then the answer is false, not an error', async () => {
    const { stream, seqs } = await streamWith(2);
    expect(await eraseMessage(nats.client.jsm, stream, seqs[0])).toBe(true);
    await expect(eraseMessage(nats.client.jsm, stream, seqs[0])).resolves.toBe(false);
    await expect(eraseMessage(nats.client.jsm, stream, seqs[1] + 100)).resolves.toBe(false);
    expect((await nats.client.jsm.streams.info(stream)).state.messages).toBe(1);
  });

  it('given two replicas erasing one subject at once, when both run, then both end without an error and every message is gone', async () => {
    const { stream, subject } = await streamWith(200);
    const [a, b] = await Promise.all([eraseSubjectMessages(nats.client.jsm, stream, subject), eraseSubjectMessages(nats.client.jsm, stream, subject)]);
    expect(a + b).toBe(200);
    expect((await nats.client.jsm.streams.info(stream)).state.messages).toBe(0);
  });

  it('given a stream that is missing, when a message is erased, then the error is still thrown', async () => {
    await expect(eraseMessage(nats.client.jsm, natsNames(nats.prefix()).resultStream, 1)).rejects.toThrow(/stream not found/i);
  });
});
