/**
 * `POST …/compactions` without a strategy compacts by the session's stored policy (newcomer
 * ncsdkuser F3): one request instead of `GET …/policy` then `POST …/compactions` with its fields
 * copied in, decided on the policy of the state it is decided on. Without a policy: 400
 * `invalid_parameter` naming `strategy`, nothing written. The policy's automatic passes record its
 * revision too. In-process service, about 2 s.
 */
import { useService } from '../support/service-harness';
import { CompactionAnswerSchema, CompactionHistoryItemSchema, CompactionHistoryPageSchema } from '../../apps/session-service/src/http/response-schemas';
import { noPolicyMessage } from '../../libs/session/src/decider/compaction-by-policy';

describe('POST …/compactions without a strategy: by the stored policy', () => {
  const harness = useService();
  const http = () => harness.http();
  const head = () => harness.service.store.headPosition();
  const turns = (n: number) =>
    Array.from({ length: n }, (_, i) => [
      { id: `u${i}`, type: 'user', text: `question ${i}` },
      { id: `a${i}`, type: 'assistant', text: `answer ${i}` },
    ]).flat();
  const policy = { strategy: { type: 'turn-window', maxTurns: 1 }, trigger: { type: 'turn-count', maxTurns: 1 }, estimator: 'chars' };
  const compact = (session: string, body: object) => http().post(`/v1/sessions/${session}/compactions`).send(body);

  it('refuses a session without a policy with 400 invalid_parameter naming strategy, and writes nothing; then, once a policy is set, compacts by it', async () => {
    await http()
      .post('/v1/sessions/bp/events')
      .send({ events: turns(3) })
      .expect(201);
    const before = await head();
    for (const body of [{}, { strategy: null }, { dryRun: true }]) {
      const refused = await compact('bp', body).expect(400);
      expect(refused.body).toMatchObject({ code: 'invalid_parameter', parameter: 'strategy', message: noPolicyMessage('bp') });
    }
    expect(await head()).toBe(before);

    // appended before the policy: no automatic pass runs (they follow appends)
    const set = await http().put('/v1/sessions/bp/policy').send(policy).expect(200);
    const dry = await compact('bp', { dryRun: true }).expect(200);
    const explicitDry = await compact('bp', { ...policy, dryRun: true }).expect(200);
    expect(dry.body).toEqual({ ...explicitDry.body, from: 'policy', policyRevision: set.body.revision });
    CompactionAnswerSchema.parse(dry.body);

    const done = await compact('bp', {}).expect(200);
    CompactionAnswerSchema.parse(done.body);
    expect(done.body).toMatchObject({
      outcome: 'compacted',
      recorded: true,
      archived: ['u0', 'a0', 'u1', 'a1'],
      kept: ['u2', 'a2'],
      estimator: 'chars',
      from: 'policy',
      policyRevision: set.body.revision,
    });
    const history = await http().get(`/v1/sessions/bp/compactions?minPosition=${done.body.position}`).expect(200);
    CompactionHistoryPageSchema.parse(history.body);
    expect(history.body.compactions).toHaveLength(1);
    expect(history.body.compactions[0]).toMatchObject({
      compactionId: done.body.compactionId,
      origin: 'command',
      from: 'policy',
      policyRevision: set.body.revision,
      strategy: { type: 'turn-window', maxTurns: 1 },
      trigger: policy.trigger,
      estimator: 'chars',
    });
  });

  it("an automatic pass (the policy's trigger after an append) is recorded with the revision of the policy it applied, as a compaction by policy", async () => {
    const set = await http().put('/v1/sessions/auto-rev/policy').send(policy).expect(200);
    await http()
      .post('/v1/sessions/auto-rev/events')
      .send({ events: turns(3) })
      .expect(201);
    let compactions: Array<Record<string, unknown>> = [];
    for (let tries = 0; compactions.length === 0 && tries < 100; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      compactions = (await http().get('/v1/sessions/auto-rev/compactions').expect(200)).body.compactions;
    }
    expect(compactions).toHaveLength(1);
    expect(compactions[0]).toMatchObject({
      origin: 'auto',
      from: 'policy',
      policyRevision: set.body.revision,
      strategy: policy.strategy,
      trigger: policy.trigger,
    });
    const item = await http()
      .get(`/v1/sessions/auto-rev/compactions/${String(compactions[0].compactionId)}`)
      .expect(200);
    CompactionHistoryItemSchema.parse(item.body);
    expect(item.body).toMatchObject({ origin: 'auto', policyRevision: set.body.revision });
  });

  it('a compaction naming its strategy is recorded from the request, policyRevision null', async () => {
    await http()
      .post('/v1/sessions/named/events')
      .send({ events: turns(3) })
      .expect(201);
    await http().put('/v1/sessions/named/policy').send(policy).expect(200);
    const done = await compact('named', { strategy: { type: 'sliding-window', maxEvents: 2 } }).expect(200);
    expect(done.body).not.toHaveProperty('from');
    expect(done.body).not.toHaveProperty('policyRevision');
    const history = await http().get(`/v1/sessions/named/compactions?minPosition=${done.body.position}`).expect(200);
    expect(history.body.compactions[0]).toMatchObject({ from: 'request', policyRevision: null, strategy: { type: 'sliding-window', maxEvents: 2 } });
  });

  it('refuses a trigger or an estimator without a strategy (400 invalid_parameter naming it, before anything is read); an unknown session is 404', async () => {
    await http()
      .post('/v1/sessions/mixed/events')
      .send({ events: turns(2) })
      .expect(201);
    await http().put('/v1/sessions/mixed/policy').send(policy).expect(200);
    const before = await head();
    for (const [body, parameter] of [
      [{ trigger: { type: 'turn-count', maxTurns: 5 } }, 'trigger'],
      [{ estimator: 'o200k_base' }, 'estimator'],
    ] as const) {
      const refused = await compact('mixed', body).expect(400);
      expect(refused.body).toMatchObject({ code: 'invalid_parameter', parameter });
      expect(refused.body.message).toMatch(new RegExp(`^${parameter}: sent without a strategy`));
    }
    expect(await head()).toBe(before);
    expect((await compact('nobody-here', {}).expect(404)).body).toMatchObject({ code: 'session_not_found' });
  });
});
