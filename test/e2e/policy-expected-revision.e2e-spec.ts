/**
 * `PUT …/policy` takes the append routes' optional `expectedRevision` (README "Optimistic
 * concurrency", Policy). Newcomer's report (an exactly-once client): client 1 PUTs policy A (its
 * answer lost), client 2 PUTs policy B, client 1 resends A: without a precondition the log read A,
 * B, A, the resend silently undoing B. With `expectedRevision`: the resend of A after its own A
 * only answers A's event (a retry: nothing written, also once the session moved on); after B it
 * answers 409 `wrong_expected_revision` (B is another writer's). The service's own compaction
 * decisions after the revision do not count; the keyword forms mean what they mean on appends;
 * validation answers 400 before the revision 409. The read-only `revision` stays no precondition.
 * In-process service, about 3 s.
 */
import { useService } from '../support/service-harness';

describe('PUT …/policy with expectedRevision', () => {
  const harness = useService();
  const http = () => harness.http();
  const head = () => harness.service.store.headPosition();
  const append = async (session: string, texts: string[], expectedRevision?: string) =>
    (
      await http()
        .post(`/v1/sessions/${session}/events`)
        .send({ ...(expectedRevision === undefined ? {} : { expectedRevision }), events: texts.map((text) => ({ type: 'user', text })) })
        .expect(201)
    ).body as { revision: string; position: string };
  const put = (session: string, body: object) => http().put(`/v1/sessions/${session}/policy`).send(body);
  const policyTypes = async (session: string) => {
    const log = await http().get(`/v1/sessions/${session}/events?limit=1000`).expect(200);
    return (log.body.events as { type: string; data: { strategy: { type: string } | null } }[])
      .filter((e) => e.type === 'AutoCompactionPolicySet')
      .map((e) => e.data.strategy?.type ?? null);
  };
  const A = { strategy: { type: 'sliding-window', maxEvents: 100 } };
  const B = { strategy: { type: 'turn-window', maxTurns: 5 } };

  it('A, B, resend of A: the resend answers 409 and B stays in force (no lost update)', async () => {
    const { revision } = await append('aba', ['one', 'two']);
    const a = await put('aba', { ...A, expectedRevision: revision }).expect(200);
    const b = await put('aba', { ...B, expectedRevision: a.body.revision }).expect(200);
    const before = await head();
    const resent = await put('aba', { ...A, expectedRevision: revision }).expect(409);
    expect(resent.body).toMatchObject({ code: 'wrong_expected_revision', expected: revision, actual: b.body.revision });
    expect(await head()).toBe(before);
    const got = await http().get(`/v1/sessions/aba/policy?minPosition=${b.body.position}`).expect(200);
    expect(got.body).toEqual(b.body);
    expect(await policyTypes('aba')).toEqual(['sliding-window', 'turn-window']);
  });

  it('a resend of A after its own A only is a retry: it answers A, writing nothing, also after later events and compactions', async () => {
    const { revision } = await append('own', ['one', 'two', 'three']);
    const a = await put('own', { ...A, expectedRevision: revision }).expect(200);
    const before = await head();
    const again = await put('own', { ...A, expectedRevision: revision }).expect(200);
    expect(again.body).toEqual(a.body);
    expect(await head()).toBe(before);
    // The session moves on (a conversation event, a compaction): the resend still names A's event.
    await append('own', ['four']);
    await http()
      .post('/v1/sessions/own/compactions')
      .send({ strategy: { type: 'sliding-window', maxEvents: 1 } })
      .expect(200);
    const later = await head();
    const late = await put('own', { ...A, expectedRevision: revision }).expect(200);
    expect(late.body).toEqual(a.body);
    expect(await head()).toBe(later);
    expect(await policyTypes('own')).toEqual(['sliding-window']);
  });

  it('a revision that only compaction decisions came after still holds: the policy is written after them', async () => {
    const { revision } = await append('comp', ['one', 'two', 'three', 'four']);
    const compacted = await http()
      .post('/v1/sessions/comp/compactions')
      .send({ strategy: { type: 'sliding-window', maxEvents: 2 } })
      .expect(200);
    expect(compacted.body.outcome).toBe('compacted');
    expect(BigInt(compacted.body.revision)).toBeGreaterThan(BigInt(revision));
    const set = await put('comp', { ...B, expectedRevision: revision }).expect(200);
    expect(BigInt(set.body.revision)).toBe(BigInt(compacted.body.revision) + 1n);
    // A conversation event after it is another writer's: 409.
    await append('comp', ['five']);
    const stale = await put('comp', { ...A, expectedRevision: set.body.revision }).expect(409);
    expect(stale.body).toMatchObject({ code: 'wrong_expected_revision', expected: set.body.revision });
  });

  it('a policy change after the revision is another writer: 409, also for a clear', async () => {
    const { revision } = await append('other', ['one']);
    await put('other', { ...A, expectedRevision: revision }).expect(200);
    const clear = await put('other', { strategy: null, expectedRevision: revision }).expect(409);
    expect(clear.body).toMatchObject({ code: 'wrong_expected_revision', expected: revision });
  });

  it('takes the keyword forms and both revision forms, as appends do', async () => {
    // no_stream: the PUT creates the session; a resend of it answers the original; another policy with no_stream is 409.
    const created = await put('kw', { ...A, expectedRevision: 'no_stream' }).expect(200);
    expect(created.body.revision).toBe('0');
    expect((await put('kw', { ...A, expectedRevision: 'no_stream' }).expect(200)).body).toEqual(created.body);
    const notNew = await put('kw', { ...B, expectedRevision: 'no_stream' }).expect(409);
    expect(notNew.body).toMatchObject({ code: 'wrong_expected_revision', expected: 'no_stream', actual: '0' });
    // stream_exists: refused on a session without events, taken on one with them.
    const missing = await put('kw-missing', { ...A, expectedRevision: 'stream_exists' }).expect(409);
    expect(missing.body).toMatchObject({ code: 'wrong_expected_revision', expected: 'stream_exists', actual: 'no_stream' });
    const exists = await put('kw', { ...B, expectedRevision: 'stream_exists' }).expect(200);
    // A JSON number and a decimal string; "any" is no check.
    const asNumber = await put('kw', { ...A, expectedRevision: Number(exists.body.revision) }).expect(200);
    const asText = await put('kw', { ...B, expectedRevision: asNumber.body.revision }).expect(200);
    await put('kw', { ...A, expectedRevision: 'any' }).expect(200);
    await put('kw', { ...B, expectedRevision: asText.body.revision }).expect(409);
    // A clear of a session that does not exist: the revision is checked first (409), then the clear (404).
    await put('kw-none', { strategy: null, expectedRevision: '3' }).expect(409);
    const none = await put('kw-none', { strategy: null, expectedRevision: 'no_stream' }).expect(404);
    expect(none.body.code).toBe('session_not_found');
  });

  it('answers 400 before 409: a malformed revision, null, or an invalid policy with a stale revision', async () => {
    const { revision } = await append('v', ['one']);
    await append('v', ['two']);
    for (const bad of ['08', '+1', 'latest', -1, 1.5]) {
      const res = await put('v', { ...A, expectedRevision: bad }).expect(400);
      expect(res.body).toMatchObject({ code: 'validation_failed', parameter: 'expectedRevision' });
    }
    const nul = await put('v', { ...A, expectedRevision: null }).expect(400);
    expect(nul.body).toMatchObject({ code: 'validation_failed', parameter: 'expectedRevision' });
    expect(nul.body.message).toMatch(/^expectedRevision: is null: leave it out/);
    const badStrategy = await put('v', { strategy: { type: 'sliding-window', maxEvents: 0 }, expectedRevision: revision }).expect(400);
    expect(badStrategy.body.code).toBe('invalid_parameter');
    const clearWithTrigger = await put('v', { strategy: null, trigger: { type: 'turn-count', maxTurns: 2 }, expectedRevision: revision }).expect(400);
    expect(clearWithTrigger.body).toMatchObject({ code: 'invalid_parameter', parameter: 'trigger' });
  });

  it('keeps the read-only revision no precondition: a GET answer with a stale revision is still taken', async () => {
    await append('ro', ['one']);
    const set = await put('ro', A).expect(200);
    await append('ro', ['two']);
    const edited = await put('ro', { ...set.body, strategy: B.strategy }).expect(200);
    expect(edited.body.strategy).toEqual(expect.objectContaining({ type: 'turn-window' }));
  });
});
