/**
 * A decision larger than the NATS server's `max_payload` does not stall the decisions feed
 * (newcomer ncnats72 F1): a `CompactionCompleted` whose `archivedBecause` alone is over the limit
 * (it repeats the archived ids) reaches the decisions stream without its id lists, named in
 * `omitted`; a later decision of another session follows it; the feed is not paused. Before, the
 * decision went without `keptIds` and `archivedIds` only, the server refused it on every retry, and
 * every later decision of every session waited behind it for ever. Against a throwaway
 * `nats-server` with `max_payload: 64KB` (400 archived events of 240-character ids suffice);
 * skips with one line when no `nats-server` binary is installed. Runtime ≈ 5 s.
 */
import { startService, type Harness } from '../support/service-harness';
import { eventually, natsClient, readStream, uniquePrefix, type NatsTestClient } from '../support/nats-test';
import { NATS_SERVER_BINARY, startThrowawayNats, type ThrowawayNats } from '../support/throwaway-nats';
import { decisionSubject, natsNames } from '../../apps/session-service/src/nats/nats-names';

const suite = NATS_SERVER_BINARY ? describe : describe.skip;
if (!NATS_SERVER_BINARY) process.stderr.write('SKIPPED NATS decision feed size: no nats-server binary installed\n');

const MAX_PAYLOAD = 64 * 1024;
const EVENTS = 400;

suite('a decision larger than the NATS server max_payload', () => {
  jest.setTimeout(60_000);
  let nats: ThrowawayNats;
  let client: NatsTestClient;
  let harness: Harness;
  const prefix = uniquePrefix();
  const names = natsNames(prefix);

  beforeAll(async () => {
    nats = await startThrowawayNats('nats-decision-size', 'max_payload: 64KB');
    client = await natsClient(nats.nc);
    harness = await startService({ env: { NATS_URL: nats.url, NATS_PREFIX: prefix } });
  });

  afterAll(async () => {
    await harness?.stop();
    await nats?.stop();
  });

  /** Appends `count` alternating user/assistant events with ids of 240 characters to `session`, then compacts it to its last 2 events. */
  const appendAndCompact = async (session: string, count: number): Promise<string> => {
    const events = Array.from({ length: count }, (_, i) => ({
      id: `${session}-${i}-`.padEnd(240, 'x'),
      type: i % 2 ? 'assistant' : 'user',
      text: `text ${i}`,
    }));
    await harness.http().post(`/v1/sessions/${session}/events`).send({ events }).expect(201);
    const res = await harness
      .http()
      .post(`/v1/sessions/${session}/compactions`)
      .send({ strategy: { type: 'sliding-window', maxEvents: 2 } })
      .expect((r) => expect(r.status).toBeLessThan(300));
    return (res.body as { compactionId: string }).compactionId;
  };

  it('publishes it without its id lists, named in omitted; a later decision of another session follows it; the feed is not paused', async () => {
    const bigId = await appendAndCompact('big', EVENTS);
    const smallId = await appendAndCompact('small', 6);
    const bigSubject = decisionSubject(prefix, 'default', 'big');
    const smallSubject = decisionSubject(prefix, 'default', 'small');
    const got = await readStream(client, names.decisionStream, `${prefix}.decisions.>`, (m) => m.some((d) => d.subject === smallSubject), {
      durable: 'size',
      timeoutMs: 30_000,
    });
    const subjects = got.map((d) => d.subject);
    expect(subjects).toEqual([bigSubject, smallSubject]);
    const [big, small] = got.map((d) => d.body as { type: string; position: string; decision: Record<string, unknown> });
    expect(big).toMatchObject({
      type: 'CompactionCompleted',
      sessionId: 'big',
      decision: { compactionId: bigId, outcome: 'compacted', archivedCount: EVENTS - 2 },
    });
    expect(big.decision.omitted).toEqual(['keptIds', 'archivedIds', 'archivedBecause']);
    expect(big.decision).not.toHaveProperty('archivedBecause');
    // It was over the limit by archivedBecause alone: what a consumer reads instead (GET …/compactions/<compactionId>) has it.
    const item = (await harness.http().get(`/v1/sessions/big/compactions/${bigId}`).expect(200)).body as { archivedBecause: Record<string, string[]> };
    expect(Buffer.byteLength(JSON.stringify(item.archivedBecause))).toBeGreaterThan(MAX_PAYLOAD);
    expect(small).toMatchObject({ type: 'CompactionCompleted', sessionId: 'small', decision: { compactionId: smallId, keptIds: expect.any(Array) } });
    expect(small.decision).not.toHaveProperty('omitted');
    expect(BigInt(small.position)).toBeGreaterThan(BigInt(big.position));
    await eventually(
      async () => {
        const health = (await harness.http().get('/health').expect(200)).body as { nats: { decisionFeed: { lastError: string | null; checkpoint: string } } };
        return health.nats.decisionFeed.lastError === null && BigInt(health.nats.decisionFeed.checkpoint) >= BigInt(small.position);
      },
      10_000,
      'the feed to be past the small decision, not paused',
    );
    const metrics = (await harness.http().get('/metrics').expect(200)).text;
    expect(/^nats_decision_feed_paused (\S+)$/m.exec(metrics)?.[1]).toBe('0');
  });
});
