/**
 * The NATS `compact` command without a strategy compacts by the session's stored policy, as `POST
 * …/compactions` does (the same body rule, the same answer, the same 400 without a policy; newcomer
 * ncsdkuser F3). Against the machine's NATS server (a prefix of this file's own); skipped with one
 * line without it.
 */
import { randomUUID } from 'node:crypto';
import { startService, type Harness } from '../support/service-harness';
import { NATS_TEST_URL, describeWithNats, publishCommand, readStream, uniquePrefix, useNatsSuite } from '../support/nats-test';
import { commandSubject, natsNames } from '../../apps/session-service/src/nats/nats-names';
import { noPolicyMessage } from '../../libs/session/src/decider/compaction-by-policy';

jest.setTimeout(60_000);

describeWithNats('NATS compaction by policy')('NATS compact without a strategy: by the stored policy', () => {
  const names = natsNames(uniquePrefix());
  let harness: Harness | null = null;

  const nats = useNatsSuite('NATS compaction by policy', { quiet: true, prefixes: [names.prefix] });

  beforeAll(async () => {
    harness = await startService({ env: { NATS_URL: NATS_TEST_URL, NATS_PREFIX: names.prefix, NATS_ACK_WAIT_MS: '5000' } });
  });

  afterAll(async () => {
    await harness?.stop();
    await nats.close();
    jest.restoreAllMocks();
  });

  /** Publishes a compact command for `session` and reads its answer from the results stream. */
  const compactOverNats = async (session: string, body: unknown) => {
    const msgId = randomUUID();
    await publishCommand(nats.client.js, commandSubject(names.prefix, 'default', session, 'compact'), body, { msgId });
    const isMine = (a: { headers: Record<string, string> }) => a.headers['Command-Id'] === msgId;
    const answers = await readStream(nats.client, names.resultStream, `${names.prefix}.results.default.${session}`, (got) => got.some(isMine));
    const mine = answers.find(isMine)!;
    return { status: mine.headers.Status, body: mine.body as Record<string, unknown> };
  };

  it('refuses a session without a policy (400 invalid_parameter naming strategy, nothing written), then compacts by the policy once set', async () => {
    const http = harness!.http();
    const events = Array.from({ length: 3 }, (_, i) => [
      { id: `u${i}`, type: 'user', text: `question ${i}` },
      { id: `a${i}`, type: 'assistant', text: `answer ${i}` },
    ]).flat();
    await http.post('/v1/sessions/np/events').send({ events }).expect(201);
    const before = await harness!.service.store.headPosition();
    const refused = await compactOverNats('np', {});
    expect(refused).toEqual({
      status: '400',
      body: expect.objectContaining({ code: 'invalid_parameter', parameter: 'strategy', message: noPolicyMessage('np') }),
    });
    expect(await harness!.service.store.headPosition()).toBe(before);

    const mixed = await compactOverNats('np', { estimator: 'chars' });
    expect(mixed).toEqual({ status: '400', body: expect.objectContaining({ code: 'invalid_parameter', parameter: 'estimator' }) });

    const policy = { strategy: { type: 'turn-window', maxTurns: 1 }, trigger: { type: 'turn-count', maxTurns: 1 }, estimator: 'chars' };
    const set = await http.put('/v1/sessions/np/policy').send(policy).expect(200);
    const done = await compactOverNats('np', { strategy: null });
    expect(done.status).toBe('200');
    expect(done.body).toMatchObject({
      outcome: 'compacted',
      recorded: true,
      kept: ['u2', 'a2'],
      from: 'policy',
      policyRevision: set.body.revision,
      estimator: 'chars',
    });
    const history = await http.get(`/v1/sessions/np/compactions?minPosition=${String(done.body.position)}`).expect(200);
    expect(history.body.compactions[0]).toMatchObject({
      from: 'policy',
      policyRevision: set.body.revision,
      requestedBy: expect.objectContaining({ via: 'nats' }),
    });
  });
});
