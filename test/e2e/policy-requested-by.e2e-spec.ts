/**
 * Who set or cleared a session's auto-compaction policy (newcomer ncui74 F1): the policy event
 * records the `requestedBy` of the `PUT …/policy` that wrote it (API key label, request id, who
 * chose it, `via: 'http'`; never the key), in the shape of a commanded compaction's and an
 * erasure's, so the audit trail of an automatic pass (`policyRevision`) ends at someone.
 * `GET …/policy`, the PUT's answer and the log's event show it. It is not part of the policy: the
 * policy in force sent again by another key, with another request id, writes nothing and answers
 * the one who set it; a `requestedBy` in the body (an answer sent back) is ignored. The session
 * list's policy stays the policy alone. In-process service with two keys of one tenant.
 */
import { POLICY_SET, type PolicySetData } from '@lib/session';
import { useService } from '../support/service-harness';
import { SessionPolicyAnswerSchema, SessionPolicySchema } from '../../apps/session-service/src/http/response-schemas';

const OPS = 'ops-key-31313131';
const BOT = 'bot-key-42424242';
const POLICY = { strategy: { type: 'sliding-window', maxEvents: 4 }, trigger: { type: 'turn-count', maxTurns: 3 }, estimator: 'chars' };

describe('requestedBy of policy events', () => {
  const harness = useService({ env: { API_KEYS: `${OPS}:tenantA,${BOT}:tenantA` } });
  const put = (session: string, key: string, body: object, requestId?: string) => {
    const req = harness.http().put(`/v1/sessions/${session}/policy`).set('Authorization', `Bearer ${key}`);
    return (requestId ? req.set('X-Request-Id', requestId) : req).send(body);
  };
  const getPolicy = async (session: string, minPosition: string) =>
    (await harness.http().get(`/v1/sessions/${session}/policy?minPosition=${minPosition}`).set('Authorization', `Bearer ${BOT}`).expect(200)).body;
  const logEvent = async (session: string, revision: string, minPosition: string) => {
    const log = await harness
      .http()
      .get(`/v1/sessions/${session}/events?fromRevision=${revision}&limit=1&minPosition=${minPosition}`)
      .set('Authorization', `Bearer ${OPS}`)
      .expect(200);
    return log.body.events[0] as { type: string; data: Record<string, unknown> };
  };
  const head = () => harness.service.store.headPosition();

  it('records who set the policy: the PUT answer, GET …/policy and the log event name the key label and request id; the key is never stored', async () => {
    const set = await put('p1', OPS, POLICY, 'policy-req-1').expect(200);
    const requestedBy = { keyLabel: 'API_KEYS#1', requestId: 'policy-req-1', requestIdFrom: 'client', via: 'http' };
    expect(SessionPolicyAnswerSchema.parse(set.body)).toMatchObject({ ...POLICY, requestedBy });
    const got = await getPolicy('p1', set.body.position);
    expect(SessionPolicySchema.parse(got)).toEqual(set.body);
    const event = await logEvent('p1', set.body.revision, set.body.position);
    expect(event).toMatchObject({ type: POLICY_SET, data: { ...POLICY, setAt: set.body.setAt, requestedBy } });
    const stored = (await harness.service.store.readAll({ maxCount: 10_000 })).filter((e) => e.type === POLICY_SET);
    expect(stored.map((e) => (e.data as PolicySetData).requestedBy)).toEqual([requestedBy]);
    expect(JSON.stringify(stored.map((e) => [e.data, e.metadata]))).not.toMatch(/ops-key|bot-key/);
  });

  it('a PUT of the policy in force by another key, with another request id, writes nothing and answers the one who set it', async () => {
    const set = await put('p2', OPS, POLICY, 'policy-req-2').expect(200);
    const before = await head();
    const again = await put('p2', BOT, POLICY, 'policy-req-2-resent').expect(200);
    expect(again.body).toEqual(set.body);
    expect(again.body.requestedBy).toEqual({ keyLabel: 'API_KEYS#1', requestId: 'policy-req-2', requestIdFrom: 'client', via: 'http' });
    // The GET answer sent back, its requestedBy included: the same policy, nothing written.
    const back = await put('p2', BOT, await getPolicy('p2', set.body.position)).expect(200);
    expect(back.body).toEqual(set.body);
    expect(await head()).toBe(before);
  });

  it('records who cleared it, with a request id the service made when the PUT sent none; a requestedBy in the body is ignored', async () => {
    const set = await put('p3', OPS, POLICY, 'policy-req-3').expect(200);
    // An edited answer sent back by BOT, its requestedBy still OPS's: the new event names BOT.
    const edited = await put('p3', BOT, { ...set.body, estimator: 'o200k_base' }, 'policy-req-3-edit').expect(200);
    expect(edited.body.requestedBy).toEqual({ keyLabel: 'API_KEYS#2', requestId: 'policy-req-3-edit', requestIdFrom: 'client', via: 'http' });
    const forged = await put('p3', BOT, { ...POLICY, requestedBy: { keyLabel: 'API_KEYS#1', requestId: 'x', via: 'nats' } }, 'policy-req-3-forged').expect(200);
    expect(forged.body.requestedBy).toEqual({ keyLabel: 'API_KEYS#2', requestId: 'policy-req-3-forged', requestIdFrom: 'client', via: 'http' });
    const clear = await put('p3', BOT, { strategy: null }).expect(200);
    expect(clear.body).toMatchObject({
      strategy: null,
      requestedBy: { keyLabel: 'API_KEYS#2', requestId: clear.headers['x-request-id'], requestIdFrom: 'service', via: 'http' },
    });
    expect(clear.body.requestedBy.requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-/);
    expect(await getPolicy('p3', clear.body.position)).toEqual(clear.body);
    expect((await logEvent('p3', clear.body.revision, clear.body.position)).data).toEqual({
      strategy: null,
      trigger: null,
      estimator: null,
      setAt: clear.body.setAt,
      requestedBy: clear.body.requestedBy,
    });
  });

  it('answers requestedBy null for a session that never had a policy; the session list shows the policy alone', async () => {
    const appended = await harness
      .http()
      .post('/v1/sessions/p4/events')
      .set('Authorization', `Bearer ${OPS}`)
      .send({ events: [{ type: 'user', text: 'hello' }] })
      .expect(201);
    expect(await getPolicy('p4', appended.body.position)).toMatchObject({ strategy: null, requestedBy: null });
    const set = await put('p4', OPS, POLICY, 'policy-req-4').expect(200);
    const session = await harness.http().get(`/v1/sessions/p4?minPosition=${set.body.position}`).set('Authorization', `Bearer ${OPS}`).expect(200);
    expect(session.body.policy).toEqual({ ...POLICY, setAt: set.body.setAt });
  });
});
