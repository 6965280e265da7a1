/**
 * The policy routes speak one representation (`SessionPolicy`): `GET …/policy` answers it, `PUT
 * …/policy` answers it and accepts it back as it is (read-only fields ignored), which sets the same
 * policy and writes nothing. One null rule for the policy's optional fields (null counts as absent:
 * trigger fires always, estimator cl100k_base). Query strings: an optional parameter sent empty
 * (`cursor=`) counts as absent on every route, but an identity filter (recall's `sessionId`,
 * `userId`, `compactionId`, the session list's `userId`) sent empty is refused 400, and a date-time
 * whose unencoded `+` arrived as a space is told to send it as `%2B`. In-process service, about 2 s.
 */
import { useService } from '../support/service-harness';
import { SessionPolicySchema } from '../../apps/session-service/src/http/response-schemas';

describe('policy API: one representation, one null rule; query strings', () => {
  const harness = useService();
  const http = () => harness.http();
  const head = () => harness.service.store.headPosition();
  const append = (session: string, texts: string[]) =>
    http()
      .post(`/v1/sessions/${session}/events`)
      .send({ events: texts.map((text) => ({ type: 'user', text })) })
      .expect(201);
  const getPolicy = async (session: string, minPosition?: string) =>
    (
      await http()
        .get(`/v1/sessions/${session}/policy${minPosition ? `?minPosition=${minPosition}` : ''}`)
        .expect(200)
    ).body as Record<string, unknown>;
  const put = (session: string, body: object) => http().put(`/v1/sessions/${session}/policy`).send(body);

  it('answers GET and PUT in one shape, and a GET answer PUT back as it is sets the same policy, writing nothing', async () => {
    await append('rt', ['one', 'two']);
    const set = await put('rt', {
      strategy: { type: 'rolling-summary', keepTurns: 2, summarizeAtTokens: 2500 },
      trigger: {
        type: 'any-of',
        triggers: [
          { type: 'token-count', threshold: 6000 },
          { type: 'turn-count', maxTurns: 8 },
        ],
      },
      estimator: 'chars',
    }).expect(200);
    SessionPolicySchema.parse(set.body);
    const got = await getPolicy('rt', set.body.position);
    expect(got).toEqual(set.body);
    const before = await head();
    const again = await put('rt', got).expect(200);
    expect(again.body).toEqual(got);
    expect(await head()).toBe(before);
    // Edited and sent back (the read-only fields as they were): the new policy, in the same shape.
    const edited = await put('rt', { ...got, estimator: 'o200k_base' }).expect(200);
    expect(Object.keys(edited.body).sort()).toEqual(Object.keys(got).sort());
    expect(edited.body).toMatchObject({ estimator: 'o200k_base', strategy: got.strategy, trigger: got.trigger });
    expect(BigInt(edited.body.revision)).toBeGreaterThan(BigInt(got.revision as string));
  });

  it('answers a clear in the same shape, with trigger and estimator null, and takes it back as it is', async () => {
    await append('clear-rt', ['one']);
    await put('clear-rt', { strategy: { type: 'sliding-window', maxEvents: 4 }, estimator: 'chars' }).expect(200);
    const clear = await put('clear-rt', { strategy: null }).expect(200);
    expect(SessionPolicySchema.parse(clear.body)).toMatchObject({ sessionId: 'clear-rt', strategy: null, trigger: null, estimator: null });
    expect(clear.body).toHaveProperty('setAt');
    expect(await getPolicy('clear-rt', clear.body.position)).toEqual(clear.body);
    // The log's policy event says what the API says (newcomer ncaudit56 F4: it held "estimator":"cl100k_base").
    const log = await http().get(`/v1/sessions/clear-rt/events?fromRevision=${clear.body.revision}&minPosition=${clear.body.position}`).expect(200);
    expect(log.body.events[0]).toMatchObject({
      type: 'AutoCompactionPolicySet',
      data: { strategy: null, trigger: null, estimator: null, setAt: clear.body.setAt },
    });
    const before = await head();
    const back = await put('clear-rt', clear.body).expect(200);
    expect(back.body).toEqual(clear.body);
    expect(await head()).toBe(before);
  });

  it('takes back the answer of a session that never had a policy (nothing to clear, nothing written)', async () => {
    const { body: appended } = await append('never', ['one']);
    const none = await getPolicy('never', appended.position);
    expect(none).toEqual({ sessionId: 'never', strategy: null, trigger: null, estimator: null, revision: appended.revision, requestedBy: null });
    const before = await head();
    const back = await put('never', none).expect(200);
    // the same, and (as every PUT answer) a position: here the session's last event's, for minPosition
    expect(back.body).toEqual({ ...none, position: appended.position });
    expect(await head()).toBe(before);
  });

  it('refuses a sessionId naming another session, and a trigger or estimator with a clear', async () => {
    const got = await getPolicy('rt');
    const other = await put('clear-rt', got).expect(400);
    expect(other.body).toMatchObject({ code: 'invalid_parameter', parameter: 'sessionId' });
    expect(other.body.message).toMatch(/^sessionId: is "rt", another session than the "clear-rt" .*leave it out/);
    const clearWithTrigger = await put('rt', { ...got, strategy: null }).expect(400);
    expect(clearWithTrigger.body).toMatchObject({ code: 'invalid_parameter', parameter: 'trigger' });
    expect(clearWithTrigger.body.message).toMatch(/trigger null or left out/);
  });

  it('reads null as absent on every optional policy field: trigger always, estimator cl100k_base', async () => {
    await append('nulls', ['one']);
    const withNulls = await put('nulls', { strategy: { type: 'turn-window', maxTurns: 3 }, trigger: null, estimator: null }).expect(200);
    expect(withNulls.body).toMatchObject({ strategy: { type: 'turn-window', maxTurns: 3 }, trigger: null, estimator: 'cl100k_base' });
    const before = await head();
    const absent = await put('nulls', { strategy: { type: 'turn-window', maxTurns: 3 } }).expect(200);
    expect(absent.body).toEqual(withNulls.body);
    expect(await head()).toBe(before);
    const clear = await put('nulls', { strategy: null, trigger: null, estimator: null }).expect(200);
    expect(clear.body).toMatchObject({ strategy: null, trigger: null, estimator: null });
    // The compaction body follows the same rule.
    const compaction = await http()
      .post('/v1/sessions/nulls/compactions')
      .send({ strategy: { type: 'sliding-window', maxEvents: 5 }, trigger: null, estimator: null, dryRun: null })
      .expect(200);
    expect(compaction.body).toMatchObject({ estimator: 'cl100k_base', dryRun: false });
  });

  describe('query strings', () => {
    beforeAll(async () => {
      await append('q1', ['the reservation XK42Q9', 'another reservation']);
      await http()
        .post('/v1/sessions/q1/compactions')
        .send({ strategy: { type: 'sliding-window', maxEvents: 1 } })
        .expect(200);
    });

    it.each([
      ['recall', '/v1/recall?q=reservation&cursor=', '/v1/recall?q=reservation'],
      [
        'recall, every paging and shaping parameter',
        '/v1/recall?q=reservation&sessionId=q1&cursor=&limit=&type=&archived=&from=&to=&minPosition=',
        '/v1/recall?q=reservation&sessionId=q1',
      ],
      ['session list', '/v1/sessions?cursor=&limit=', '/v1/sessions'],
      ['session list, every other parameter', '/v1/sessions?updatedSince=&updatedBefore=&estimator=&minPosition=', '/v1/sessions'],
      ['session summary', '/v1/sessions/q1?estimator=&minPosition=', '/v1/sessions/q1'],
      ['policy', '/v1/sessions/q1/policy?minPosition=', '/v1/sessions/q1/policy'],
      ['compaction history', '/v1/sessions/q1/compactions?cursor', '/v1/sessions/q1/compactions'],
      ['compaction history, every parameter', '/v1/sessions/q1/compactions?cursor=&limit=&minPosition=', '/v1/sessions/q1/compactions'],
      ['erasure list', '/v1/erasures?cursor=&limit=&minPosition=', '/v1/erasures'],
      ['log', '/v1/sessions/q1/events?fromRevision=&limit=&minPosition=', '/v1/sessions/q1/events'],
      ['window', '/v1/sessions/q1/window?atRevision=&format=&estimator=', '/v1/sessions/q1/window'],
      ['window, atTime and minPosition', '/v1/sessions/q1/window?atTime=&minPosition=', '/v1/sessions/q1/window'],
      ['recall, an empty occurrence among several', '/v1/recall?q=reservation&archived=&archived=true', '/v1/recall?q=reservation&archived=true'],
    ])('%s: an optional parameter sent empty counts as absent (the first page, the default)', async (_name, empty, absent) => {
      const a = await http().get(empty).expect(200);
      const b = await http().get(absent).expect(200);
      expect(a.body).toEqual(b.body);
    });

    it('counts an empty compaction or diff minPosition as absent', async () => {
      const { compactions } = (await http().get('/v1/sessions/q1/compactions').expect(200)).body as { compactions: Array<{ compactionId: string }> };
      const item = `/v1/sessions/q1/compactions/${compactions[0].compactionId}`;
      expect((await http().get(`${item}?minPosition=`).expect(200)).body).toEqual((await http().get(item).expect(200)).body);
      expect((await http().get(`${item}/diff?minPosition=`).expect(200)).body).toEqual((await http().get(`${item}/diff`).expect(200)).body);
    });

    // An identity filter left out widens the read to the whole tenant: sent empty (most likely an empty
    // variable, ?sessionId=${sid}) it is refused, with the code a malformed value of it gets (newcomer F2).
    it.each([
      [
        'recall sessionId',
        '/v1/recall?q=reservation&sessionId=',
        'sessionId',
        'invalid_session_id',
        'give a session id, or leave the parameter out to search every session of the tenant',
      ],
      [
        'recall sessionId, no "="',
        '/v1/recall?q=reservation&sessionId',
        'sessionId',
        'invalid_session_id',
        'give a session id, or leave the parameter out to search every session of the tenant',
      ],
      [
        'recall sessionId, an empty occurrence among several',
        '/v1/recall?q=reservation&sessionId=&sessionId=q1',
        'sessionId',
        'invalid_session_id',
        'give a session id, or leave the parameter out to search every session of the tenant',
      ],
      [
        'recall userId',
        '/v1/recall?q=reservation&userId=&cursor=',
        'userId',
        'validation_failed',
        'give a user id, or leave the parameter out to search the sessions of every user of the tenant',
      ],
      [
        'recall compactionId',
        '/v1/recall?q=reservation&compactionId=',
        'compactionId',
        'validation_failed',
        'give a compaction id (a UUID), or leave the parameter out to search events whichever compaction archived them, if any',
      ],
      [
        'session list userId',
        '/v1/sessions?userId=&limit=',
        'userId',
        'validation_failed',
        'give a user id, or leave the parameter out to list the sessions of every user of the tenant',
      ],
      [
        'session list userId, an empty occurrence among several',
        '/v1/sessions?userId=u1&userId=',
        'userId',
        'validation_failed',
        'give a user id, or leave the parameter out to list the sessions of every user of the tenant',
      ],
    ])('%s sent empty: 400 naming it and what to do, not every session of the tenant', async (_name, path, parameter, code, fix) => {
      const res = await http().get(path).expect(400);
      expect(res.body).toMatchObject({ code, parameter, message: `${parameter}: is empty: ${fix}` });
    });

    it('refuses an empty identity filter with the code a malformed value of it gets', async () => {
      for (const [malformed, empty] of [
        ['/v1/recall?q=reservation&sessionId=a%20b', '/v1/recall?q=reservation&sessionId='],
        [`/v1/recall?q=reservation&userId=${'u'.repeat(257)}`, '/v1/recall?q=reservation&userId='],
        ['/v1/recall?q=reservation&compactionId=nope', '/v1/recall?q=reservation&compactionId='],
        [`/v1/sessions?userId=${'u'.repeat(257)}`, '/v1/sessions?userId='],
      ]) {
        const [a, b] = [await http().get(malformed).expect(400), await http().get(empty).expect(400)];
        expect({ empty, code: b.body.code, parameter: b.body.parameter }).toEqual({ empty, code: a.body.code, parameter: a.body.parameter });
      }
    });

    it('refuses a userId filter no user id can be (NUL, a bidi override, a zero-width space) on the session list as recall does: 400 saying what to fix (newcomer ncapi71 F4)', async () => {
      for (const bad of ['a%00b', '%E2%80%AEab', 'a%E2%80%8Bb']) {
        const list = await http().get(`/v1/sessions?userId=${bad}`).expect(400);
        const recall = await http().get(`/v1/recall?q=reservation&userId=${bad}`).expect(400);
        expect({ bad, code: list.body.code, parameter: list.body.parameter, message: list.body.message }).toEqual({
          bad,
          code: recall.body.code,
          parameter: 'userId',
          message: recall.body.message,
        });
      }
    });

    it('still refuses a required parameter sent empty (recall q=)', async () => {
      const res = await http().get('/v1/recall?q=&cursor=').expect(400);
      expect(res.body).toMatchObject({ code: 'invalid_query', parameter: 'q' });
    });

    it.each([
      ['recall from', '/v1/recall?q=reservation&from=2026-01-01T00:00:00+01:00', 'from'],
      ['recall to', '/v1/recall?q=reservation&to=2026-01-01T00:00:00.250+01:00', 'to'],
      ['session list updatedSince', '/v1/sessions?updatedSince=2026-01-01T00:00:00+05:30', 'updatedSince'],
      ['session list updatedBefore', '/v1/sessions?updatedBefore=2026-01-01T00:00:00+05:30', 'updatedBefore'],
    ])('%s: a "+" offset that arrived as a space is told to be sent as %%2B', async (_name, path, parameter) => {
      const res = await http().get(path).expect(400);
      expect(res.body).toMatchObject({ code: 'validation_failed', parameter });
      expect(res.body.message).toMatch(
        new RegExp(
          `^${parameter}: must be an ISO-8601 date-time: its "\\+" offset arrived as a space .*send the \\+ as %2B \\(2026-01-01T00:00[^ ]*%2B0\\d:\\d\\d\\)`,
        ),
      );
      const encoded = await http().get(path.replace('+', '%2B'));
      expect(encoded.status).toBe(200);
    });

    it('does not speak of a "+" sent as a space for what is no date-time (yesterday)', async () => {
      const res = await http().get('/v1/recall?q=reservation&from=yesterday').expect(400);
      expect(res.body.message).toMatch(/^from: must be an ISO-8601 date-time such as 2026-01-31T12:00:00Z/);
      expect(res.body.message).not.toMatch(/arrived as a space/);
    });

    it.each([
      ['2026-01-01T00:00:00 0100', /arrived as a space .*send the \+ as %2B; write the offset with a colon/],
      ['2026-01-01 00:00:00Z', /write a "T" between date and time, not a space/],
    ])('names every fix a date-time needs besides %%2B (%s), and its example is accepted', async (from, fix) => {
      const res = await http()
        .get(`/v1/recall?q=reservation&from=${encodeURIComponent(from)}`)
        .expect(400);
      expect(res.body.message).toMatch(fix);
      const example = /\(e\.g\. ([^ ()]+)\)$/.exec(res.body.message)?.[1];
      expect(example).toBeDefined();
      await http().get(`/v1/recall?q=reservation&from=${example!}`).expect(200);
    });
  });
});
