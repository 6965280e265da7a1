/**
 * Newcomer ncnatsops F4: `NATS_PREFIX=NCNATSOPS` started next to a deployment with
 * `NATS_PREFIX=ncnatsops` found that deployment's streams (the same names) and failed with a raw
 * JetStream error, `multiple non-filtered consumers not allowed on workqueue stream`. The start now
 * fails with a configuration error (exit code 2) naming the streams the prefix maps to, the other
 * deployment's prefix and consumer, and what to do. A fake JetStream manager holds the other
 * deployment's streams; the end-to-end case is in test/e2e/nats-prefix-clash.e2e-spec.ts.
 */
import { JetStreamApiError, type JetStreamManager } from '@nats-io/jetstream';
import { ConfigurationError } from '../config/configuration-error';
import { ensureStreams, streamConfigs } from './nats-streams';
import { natsNames } from './nats-names';

/** A server holding the streams (and consumers) of `prefixes`' deployments; adding a second non-filtered consumer is refused as nats-server 2.9 does. */
function serverWith(prefixes: string[], extraConsumers: string[] = []) {
  const streams = new Map<string, { subjects: string[]; consumers: string[] }>();
  for (const prefix of prefixes) {
    const names = natsNames(prefix);
    for (const c of streamConfigs(names))
      streams.set(c.name, { subjects: c.subjects!, consumers: c.name === names.commandStream ? [names.commandConsumer] : [] });
  }
  for (const c of extraConsumers) streams.get(natsNames(prefixes[0]).commandStream)!.consumers.push(c);
  const missing = (what: string) => new Error(`${what} not found`);
  const jsm = {
    streams: {
      info: async (name: string) => {
        const s = streams.get(name);
        if (!s) throw missing('stream');
        return { config: { name, subjects: s.subjects } };
      },
      add: async (config: { name: string; subjects: string[] }) => {
        streams.set(config.name, { subjects: config.subjects, consumers: [] });
        return { config };
      },
    },
    consumers: {
      info: async (stream: string, consumer: string) => {
        if (!streams.get(stream)?.consumers.includes(consumer)) throw missing('consumer');
        return { config: { ack_wait: 5000 * 1e6 } };
      },
      add: async (stream: string, config: { durable_name: string }) => {
        const s = streams.get(stream)!;
        if (s.consumers.length > 0) {
          throw new JetStreamApiError({ code: 400, err_code: 10099, description: 'multiple non-filtered consumers not allowed on workqueue stream' });
        }
        s.consumers.push(config.durable_name);
        return { config };
      },
      list: (stream: string) => ({
        async *[Symbol.asyncIterator]() {
          for (const name of streams.get(stream)?.consumers ?? []) yield { name };
        },
      }),
    },
  } as unknown as JetStreamManager;
  return { jsm, streams };
}

async function refusal(promise: Promise<unknown>): Promise<ConfigurationError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigurationError);
  return err as ConfigurationError;
}

describe('NATS_PREFIX values mapping to the streams of another deployment', () => {
  it.each(['NCNATSOPS', 'ncnatsops', 'NcNatsOps'].map((p) => [p]))(
    'given ncnatsops_x running, %s-x is refused naming the streams, the other prefix and its consumer',
    async (mine) => {
      const { jsm, streams } = serverWith(['ncnatsops_x']);
      const err = await refusal(ensureStreams(jsm, natsNames(`${mine}-x`), 5000));
      expect(err.message).toBe(
        `NATS_PREFIX=${mine}-x: it maps to the streams NCNATSOPS_X_COMMANDS, NCNATSOPS_X_RESULTS, NCNATSOPS_X_DECISIONS (the prefix upper-cased, - as _), ` +
          `and the server's NCNATSOPS_X_COMMANDS takes the subjects ncnatsops_x.commands.>, not ${mine}-x.commands.>: ` +
          `it is another deployment's, NATS_PREFIX=ncnatsops_x (its consumer ncnatsops_x-service): prefixes that differ only in letter case or - and _ map to the same stream names: ` +
          `use a NATS_PREFIX whose upper-cased form (- as _) no other deployment on this server has, or NATS_PREFIX=ncnatsops_x to be a replica of that deployment`,
      );
      // Nothing of the other deployment was changed.
      expect(streams.get('NCNATSOPS_X_COMMANDS')).toEqual({ subjects: ['ncnatsops_x.commands.>'], consumers: ['ncnatsops_x-service'] });
    },
  );

  it('the same prefix (a replica) starts as before; an unrelated prefix too', async () => {
    const { jsm } = serverWith(['ncnatsops']);
    await expect(ensureStreams(jsm, natsNames('ncnatsops'), 5000)).resolves.toMatchObject({ created: [] });
    await expect(ensureStreams(jsm, natsNames('other'), 5000)).resolves.toMatchObject({
      created: ['OTHER_COMMANDS', 'OTHER_RESULTS', 'OTHER_DECISIONS', 'other-service'],
    });
  });

  it("an operator's consumer without a filter on the service's own command stream is named, with the fix", async () => {
    const { jsm, streams } = serverWith(['ops']);
    streams.get('OPS_COMMANDS')!.consumers = ['audit-copy'];
    const err = await refusal(ensureStreams(jsm, natsNames('ops'), 5000));
    expect(err.message).toBe(
      "NATS_PREFIX=ops: its command stream OPS_COMMANDS already has the consumer audit-copy, so JetStream refuses the service's consumer ops-service " +
        '(multiple non-filtered consumers not allowed on workqueue stream: a work-queue stream allows one consumer without a filter): ' +
        'remove the consumer audit-copy if nothing uses it (nats consumer rm OPS_COMMANDS <name>: each command goes to one consumer of the stream, and the service must be that one), or use another NATS_PREFIX',
    );
  });
});
