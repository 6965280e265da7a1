/**
 * `ensureStreams` re-creating what the server lost. nats-server 2.9.10 answers a deleted stream's
 * pull `409 Consumer Deleted` before it has removed the stream's folder: a stream re-created at
 * once lost its new files to that removal and never delivered (the CI failures of
 * nats-results-stream-and-id-lives). Met missing while running, the service now waits
 * `STREAM_SETTLE_MS`, looks again, and creates only what is still missing; at start and after a
 * reconnect it does not wait. An in-memory JetStream manager records the calls in order.
 */
import fc from 'fast-check';
import type { JetStreamManager } from '@nats-io/jetstream';
import { ensureStreams, settleMsFor, STREAM_SETTLE_MS, streamConfigs } from './nats-streams';
import { natsNames } from './nats-names';

const names = natsNames('tsettle');
const ALL = [...streamConfigs(names).map((c) => c.name), names.commandConsumer];

/** Streams and the consumer in memory (`present`: the names there); `calls` lists every add and every wait, in order. */
function fakeServer(present: Set<string>) {
  const calls: string[] = [];
  const missing = (what: string) => new Error(`${what} not found`);
  const jsm = {
    streams: {
      info: async (name: string) => {
        if (!present.has(name)) throw missing('stream');
        return { config: { name, subjects: streamConfigs(names).find((c) => c.name === name)?.subjects } };
      },
      add: async (config: { name: string }) => {
        calls.push(`add ${config.name}`);
        present.add(config.name);
        return { config };
      },
    },
    consumers: {
      info: async (stream: string, consumer: string) => {
        if (!present.has(stream)) throw missing('stream');
        if (!present.has(consumer)) throw missing('consumer');
        return { config: { ack_wait: 5000 * 1e6 } };
      },
      add: async (_stream: string, config: { durable_name: string }) => {
        calls.push(`add ${config.durable_name}`);
        present.add(config.durable_name);
        return { config };
      },
    },
  } as unknown as JetStreamManager;
  return { jsm, calls };
}

describe('ensureStreams: the settle wait before re-creating what was met missing', () => {
  it('waits STREAM_SETTLE_MS only when met missing while running, never at start or after a reconnect', () => {
    expect(STREAM_SETTLE_MS).toBeGreaterThanOrEqual(1000);
    expect(settleMsFor('met-missing')).toBe(STREAM_SETTLE_MS);
    expect(settleMsFor('start')).toBe(0);
    expect(settleMsFor('reconnect')).toBe(0);
  });

  it('given the command stream deleted while running, then it waits before re-creating the stream and its consumer', async () => {
    const present = new Set(ALL.filter((n) => n !== names.commandStream && n !== names.commandConsumer));
    const { jsm, calls } = fakeServer(present);
    const check = await ensureStreams(jsm, names, 5000, { settleMs: settleMsFor('met-missing'), sleep: async (ms) => void calls.push(`wait ${ms}`) });
    expect(calls).toEqual([`wait ${STREAM_SETTLE_MS}`, `add ${names.commandStream}`, `add ${names.commandConsumer}`]);
    expect(check.created).toEqual([names.commandStream, names.commandConsumer]);
  });

  it('given another replica re-created the stream during the wait, then it creates nothing', async () => {
    const present = new Set(ALL.filter((n) => n !== names.resultStream));
    const { jsm, calls } = fakeServer(present);
    const check = await ensureStreams(jsm, names, 5000, {
      settleMs: STREAM_SETTLE_MS,
      sleep: async () => {
        calls.push('wait');
        present.add(names.resultStream);
      },
    });
    expect(calls).toEqual(['wait']);
    expect(check.created).toEqual([]);
  });

  it('for any set of missing streams and consumer: with a settle time, every add comes after one wait (none when nothing is missing); without one, no wait; all exist after', async () => {
    await fc.assert(
      fc.asyncProperty(fc.subarray(ALL), fc.boolean(), async (missing, settle) => {
        const present = new Set(ALL.filter((n) => !missing.includes(n)));
        const { jsm, calls } = fakeServer(present);
        // The consumer goes with its stream: a deleted command stream takes its consumer with it.
        if (!present.has(names.commandStream)) present.delete(names.commandConsumer);
        const anythingMissing = ALL.some((n) => !present.has(n));
        await ensureStreams(jsm, names, 5000, { settleMs: settle ? STREAM_SETTLE_MS : 0, sleep: async () => void calls.push('wait') });
        const waits = calls.filter((c) => c === 'wait').length;
        expect(waits).toBe(settle && anythingMissing ? 1 : 0);
        if (waits === 1) expect(calls[0]).toBe('wait');
        for (const name of ALL) expect(present.has(name)).toBe(true);
      }),
    );
  });
});
