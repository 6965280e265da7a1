/**
 * Helpers for tests against the machine's NATS server (127.0.0.1:4222, or `NATS_TEST_URL`): a
 * reachability check that skips the suite with one line on a laptop without NATS (and fails in CI),
 * a unique subject/stream prefix per test file, publishing commands, and reading streams.
 */
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { Logger } from '@nestjs/common';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { natsNames, type NatsNames } from '../../apps/session-service/src/nats/nats-names';

/** URL of the NATS server the tests use. */
export const NATS_TEST_URL = process.env.NATS_TEST_URL || 'nats://127.0.0.1:4222';

/**
 * `describe` when the NATS server accepts TCP connections, else `describe.skip` after ONE line on
 * stderr. In CI (`CI` set) an unreachable server fails instead of skipping. Synchronous (a child
 * process tries the connection) so that it can choose `describe` at load time.
 */
export function describeWithNats(suite: string): jest.Describe {
  const { hostname, port } = new URL(NATS_TEST_URL);
  const probe = `require('net').connect(${Number(port) || 4222}, ${JSON.stringify(hostname)}).on('connect', () => process.exit(0)).on('error', () => process.exit(1)); setTimeout(() => process.exit(1), 2000)`;
  if (spawnSync(process.execPath, ['-e', probe]).status === 0) return describe;
  if (process.env.CI) throw new Error(`NATS is not reachable at ${NATS_TEST_URL}; CI must run it`);
  process.stderr.write(`SKIPPED ${suite}: no NATS server at ${NATS_TEST_URL}\n`);
  return describe.skip;
}

/** Connects to the test server. */
export function connectForTest(suite: string): Promise<NatsConnection> {
  return connect({ servers: NATS_TEST_URL, timeout: 5000, name: `test ${suite}` });
}

/**
 * A suite's connection to the test server and the stream prefixes it uses: {@link useNatsSuite}.
 * `nc` and `client` are set once its `beforeAll` ran (use them inside tests and later hooks).
 */
export interface NatsSuite {
  readonly nc: NatsConnection;
  readonly client: NatsTestClient;
  /** A new prefix ({@link uniquePrefix}) whose streams {@link close} deletes. */
  prefix(): string;
  /** Has {@link close} delete the streams of `prefix` too (one chosen before the suite ran); returns it. */
  adopt(prefix: string): string;
  /**
   * Deletes the streams of every prefix given out or adopted, in that order, then closes the
   * connection; only closes it when it never connected. Called by the suite's own `afterAll`,
   * where its clean-up order wants it (after the services using the streams stopped).
   */
  close(): Promise<void>;
}

/**
 * Registers a `beforeAll` that silences the Nest logger's `log` and `warn` when `options.quiet`
 * (spies the suite's `jest.restoreAllMocks()` undoes), then connects to the test server as
 * `suite` ({@link connectForTest}) with JetStream handles ({@link natsClient}). `options.prefixes`:
 * prefixes chosen before (e.g. at the file's top) whose streams {@link NatsSuite.close} deletes
 * too. The suite's `afterAll` calls {@link NatsSuite.close}.
 */
export function useNatsSuite(suite: string, options: { quiet?: boolean; prefixes?: readonly string[] } = {}): NatsSuite {
  let nc: NatsConnection | undefined;
  let client: NatsTestClient | undefined;
  const prefixes: string[] = [...(options.prefixes ?? [])];
  beforeAll(async () => {
    if (options.quiet) for (const level of ['log', 'warn'] as const) jest.spyOn(Logger.prototype, level).mockImplementation(() => undefined);
    nc = await connectForTest(suite);
    client = await natsClient(nc);
  });
  const connected = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error(`useNatsSuite(${suite}): the connection opens in beforeAll; use it inside a test or a later hook`);
    return value;
  };
  const adopt = (prefix: string): string => {
    prefixes.push(prefix);
    return prefix;
  };
  return {
    get nc() {
      return connected(nc);
    },
    get client() {
      return connected(client);
    },
    prefix: () => adopt(uniquePrefix()),
    adopt,
    async close() {
      if (client) for (const prefix of prefixes) await deleteStreams(client.jsm, prefix);
      await nc?.close();
    },
  };
}

/** A prefix no other test file uses (`t<hex>`). */
export function uniquePrefix(): string {
  return `t${randomBytes(5).toString('hex')}`;
}

/** Deletes the streams of `prefix` (ignores missing ones). */
export async function deleteStreams(jsm: JetStreamManager, prefix: string): Promise<void> {
  const names = natsNames(prefix);
  for (const stream of [names.commandStream, names.resultStream, names.decisionStream]) {
    await jsm.streams.delete(stream).catch(() => undefined);
  }
}

/** A connection with its JetStream handles. */
export interface NatsTestClient {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
}

/** JetStream handles of `nc`. */
export async function natsClient(nc: NatsConnection): Promise<NatsTestClient> {
  return { nc, js: jetstream(nc), jsm: await jetstreamManager(nc) };
}

/** Publishes a command body (object → JSON; string or bytes as is) with `Nats-Msg-Id` and optional `Reply-To`. */
export async function publishCommand(js: JetStreamClient, subject: string, body: unknown, options: { msgId?: string; replyTo?: string } = {}): Promise<void> {
  const h = headers();
  if (options.replyTo) h.set('Reply-To', options.replyTo);
  const data = body instanceof Uint8Array ? body : typeof body === 'string' ? new TextEncoder().encode(body) : new TextEncoder().encode(JSON.stringify(body));
  await js.publish(subject, data, { msgID: options.msgId, headers: h });
}

/** One message read back from a stream. */
export interface ReadMessage {
  subject: string;
  headers: Record<string, string>;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

function toRead(m: JsMsg): ReadMessage {
  const h: Record<string, string> = {};
  for (const [k, v] of m.headers ?? []) h[k] = v[0];
  return { subject: m.subject, headers: h, body: JSON.parse(new TextDecoder().decode(m.data)) };
}

/**
 * Reads messages of `stream` matching `filter` until `until` holds (a count, or a predicate on what
 * arrived) or `timeoutMs` passed, with a durable consumer `durable` (created when missing),
 * acknowledging each. Returns what arrived.
 */
export async function readStream(
  client: NatsTestClient,
  stream: string,
  filter: string,
  until: number | ((got: ReadMessage[]) => boolean),
  options: { durable?: string; timeoutMs?: number } = {},
): Promise<ReadMessage[]> {
  const done = typeof until === 'number' ? (got: ReadMessage[]) => got.length >= until : until;
  const durable = options.durable ?? `reader-${randomBytes(4).toString('hex')}`;
  try {
    await client.jsm.consumers.info(stream, durable);
  } catch {
    await client.jsm.consumers.add(stream, {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: filter,
    });
  }
  const consumer = await client.js.consumers.get(stream, durable);
  const out: ReadMessage[] = [];
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  while (!done(out) && Date.now() < deadline) {
    const batch = await consumer.fetch({ max_messages: typeof until === 'number' ? Math.min(256, until - out.length) : 1, expires: 1000 });
    try {
      for await (const m of batch) {
        out.push(toRead(m));
        m.ack();
      }
    } catch (error) {
      // This process was too busy to see the server's idle heartbeats (a loaded CI machine): fetch
      // again. Every message taken was acknowledged; the others are delivered again.
      if (!/heartbeats missed/i.test((error as Error).message)) throw error;
    }
  }
  return out;
}

/** Waits until `check` returns true (polling every 100 ms), or throws after `timeoutMs`. */
export async function eventually(check: () => Promise<boolean> | boolean, timeoutMs = 20_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Waits (up to 10 s) until the command stream of `names` is empty, then returns the shared
 * consumer's counts: commands still pending, delivered but unacknowledged, and redelivered.
 */
export async function commandQueueSettled(client: NatsTestClient, names: NatsNames): Promise<{ pending: number; unacked: number; redelivered: number }> {
  await eventually(async () => (await client.jsm.streams.info(names.commandStream)).state.messages === 0, 10_000, 'the command stream to empty');
  const consumer = await client.jsm.consumers.info(names.commandStream, names.commandConsumer);
  return { pending: consumer.num_pending, unacked: consumer.num_ack_pending, redelivered: consumer.num_redelivered };
}
