/**
 * With API keys, a request giving its key header (`Authorization` or `X-Api-Key`) on two header
 * lines is refused 401 `unauthorized` saying so (newcomer ncsec62 F4): Node keeps the first
 * `Authorization` line, a proxy in front may read the last, and the two would disagree on who the
 * caller is. One line of each kind stays accepted (`Authorization` read first). Runtime: ~2 s.
 */
import { useService } from '../support/service-harness';

const A = 'key-tenant-a-0001';
const B = 'key-tenant-b-0002';

describe('a key header given on two lines', () => {
  const harness = useService({ env: { API_KEYS: `${A}:tenantA,${B}:tenantB` } });

  it.each([
    ['Authorization', [`Bearer ${A}`, `Bearer ${B}`]],
    ['Authorization', [`Bearer ${A}`, `Bearer ${A}`]],
    ['X-Api-Key', [A, B]],
  ])('%s twice (%j): 401 unauthorized naming the header', async (name, values) => {
    // An array value is sent as one header line each (Node's setHeader); superagent's types allow arrays for Cookie only.
    const res = await harness
      .http()
      .get('/v1/sessions')
      .set(name, values as unknown as string);
    expect({ status: res.status, body: res.body }).toEqual({
      status: 401,
      body: { code: 'unauthorized', message: `${name} is given on more than one header line: send the key once` },
    });
  });

  it('one Authorization and one X-Api-Key: answered with the Authorization key, as before', async () => {
    await harness
      .http()
      .put('/v1/sessions/owned-by-a/policy')
      .set('Authorization', `Bearer ${A}`)
      .send({ strategy: { type: 'sliding-window', maxEvents: 5 } })
      .expect(200);
    const res = await harness.http().get('/v1/sessions').set('Authorization', `Bearer ${A}`).set('X-Api-Key', B);
    expect(res.status).toBe(200);
    expect(res.body.sessions.map((s: { sessionId: string }) => s.sessionId)).toEqual(['owned-by-a']);
  });
});
