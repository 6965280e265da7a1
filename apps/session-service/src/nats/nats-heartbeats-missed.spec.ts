/**
 * A pull request ended by missed idle heartbeats: the server may have lost it with the consumer (a
 * deleted command stream whose `409 Consumer Deleted` the replica never read). Before, the replica
 * only pulled again, for ever, against a consumer that was gone until a reconnect; now it asks the
 * server for the consumer and, when the server says it is not there, goes the missing-consumer way
 * (`onMissing`: the transport re-creates it). A consumer still there is left alone. The client
 * library is replaced by fakes: a first pull that ends with `heartbeats missed`, then pulls that
 * wait until closed.
 */
import { nanos, type NatsConnection } from '@nats-io/transport-node';
import type { ConsumerMessages, JetStreamClient, JetStreamManager, JsMsg } from '@nats-io/jetstream';
import { Logger } from '@nestjs/common';
import { NatsCommandConsumer } from './nats-command-consumer';
import type { NatsCommandExecutor } from './nats-command-executor';
import { natsNames } from './nats-names';

const names = natsNames('theartbeat');

/** A pull request that yields nothing: it throws `end` at once when given, else waits until closed. */
function pullRequest(end: Error | null): ConsumerMessages {
  let close: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => (close = resolve));
  const ended = (): AsyncIterator<never> => ({ next: () => closed.then(() => ({ done: true, value: undefined as never })) });
  return {
    [Symbol.asyncIterator]: (): AsyncIterator<JsMsg> => (end ? { next: () => Promise.reject(end) } : ended()),
    status: () => ({ [Symbol.asyncIterator]: ended }),
    close: async () => close(),
    closed: () => closed,
  } as unknown as ConsumerMessages;
}

/** A consumer on fakes whose first pull ends on missed heartbeats; `consumerInfo` answers the consumer look-up. */
function consumerWith(consumerInfo: () => Promise<unknown>) {
  let pulls = 0;
  const lookUps: string[] = [];
  const nc = { isClosed: () => false, flush: async () => undefined, info: { max_payload: 1024 * 1024 } } as unknown as NatsConnection;
  const js = {
    consumers: {
      get: async () => ({
        info: async () => ({ config: { ack_wait: nanos(5000) } }),
        fetch: async () => pullRequest(pulls++ === 0 ? new Error('heartbeats missed') : null),
      }),
    },
  } as unknown as JetStreamClient;
  let looked: () => void = () => undefined;
  const lookedUp = new Promise<void>((resolve) => (looked = resolve));
  const jsm = {
    consumers: {
      info: (stream: string, consumer: string) => {
        lookUps.push(`${stream}/${consumer}`);
        looked();
        return consumerInfo();
      },
    },
  } as unknown as JetStreamManager;
  const consumer = new NatsCommandConsumer(nc, js, jsm, {} as NatsCommandExecutor, names, 4, 5000);
  return { consumer, lookUps, lookedUp, pulls: () => pulls };
}

describe('NatsCommandConsumer after a pull ended on missed heartbeats', () => {
  beforeAll(() => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterAll(() => jest.restoreAllMocks());

  it('given the server no longer has the consumer, then it is reported missing (to be re-created)', async () => {
    const { consumer, lookUps } = consumerWith(() => Promise.reject(new Error('consumer not found')));
    const reported = new Promise<string>((resolve) => (consumer.onMissing = resolve));
    await consumer.start();
    try {
      expect(await reported).toBe('consumer_not_found');
      expect(lookUps[0]).toBe(`${names.commandStream}/${names.commandConsumer}`);
    } finally {
      await consumer.stop();
    }
  });

  it('given the server still has the consumer, then nothing is reported and it pulls again', async () => {
    const { consumer, lookUps, lookedUp, pulls } = consumerWith(() => Promise.resolve({ config: {} }));
    const missing: string[] = [];
    consumer.onMissing = (what) => void missing.push(what);
    await consumer.start();
    try {
      await lookedUp;
      // The next pull comes after the look-up has been answered.
      while (pulls() < 2) await new Promise((resolve) => setImmediate(resolve));
      expect(lookUps.length).toBe(1);
      expect(missing).toEqual([]);
    } finally {
      await consumer.stop();
    }
  });
});
