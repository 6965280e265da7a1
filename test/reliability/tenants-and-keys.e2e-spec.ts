/**
 * Tenants and keys (issue 7 item 5): with API_KEYS configured every /v1 route needs a known key;
 * a tenant cannot append to, compact, read, erase or search another tenant's sessions, even with
 * the same session id, and recall never returns another tenant's events; per-tenant rate limits.
 * (Start-up mode line and log hygiene of a real process: test/slow/startup-and-logs.slow-spec.ts.)
 */
import { useService } from '../support/service-harness';

const KEY_A = 'key-tenant-a-0001';
const KEY_B = 'key-tenant-b-0002';
const A = { authorization: `Bearer ${KEY_A}` };
const B = { authorization: `Bearer ${KEY_B}` };
const SECRET_A = 'MARMALADE-QUASAR-1187';

const ROUTES: Array<{ method: 'get' | 'post' | 'put' | 'delete'; path: string; body?: object }> = [
  { method: 'post', path: '/v1/sessions/shared/events', body: { events: [{ id: 'x', type: 'user', text: 'hi' }] } },
  { method: 'post', path: '/v1/sessions/shared/messages', body: { messages: [{ role: 'user', content: 'hi' }] } },
  { method: 'post', path: '/v1/sessions/shared/compactions', body: { strategy: { type: 'sliding-window', maxEvents: 1 } } },
  { method: 'get', path: '/v1/sessions/shared/compactions' },
  { method: 'get', path: '/v1/sessions/shared/compactions/abc' },
  { method: 'put', path: '/v1/sessions/shared/policy', body: { strategy: null } },
  { method: 'get', path: '/v1/sessions/shared/window' },
  { method: 'get', path: '/v1/sessions/shared/window?atRevision=0' },
  { method: 'get', path: '/v1/sessions/shared/events' },
  { method: 'delete', path: '/v1/sessions/shared' },
  { method: 'get', path: `/v1/recall?q=${SECRET_A}` },
];

describe('tenants and API keys', () => {
  const harness = useService({ env: { API_KEYS: `${KEY_A}:tenantA,${KEY_B}:tenantB` } });
  let compactionA: string;

  beforeAll(async () => {
    const http = harness.http;
    await http()
      .post('/v1/sessions/shared/events')
      .set(A)
      .send({
        events: [
          { id: 'a-u1', type: 'user', text: `my passport number is ${SECRET_A}` },
          { id: 'a-c1', type: 'assistant', text: null, toolCalls: [{ id: 'callA', name: 'save_passport', arguments: `{"n":"${SECRET_A}"}` }] },
          { id: 'a-t1', type: 'tool', responses: [{ toolCallId: 'callA', name: 'save_passport', data: '{"saved":true}' }] },
          { id: 'a-a1', type: 'assistant', text: 'saved' },
          { id: 'a-u2', type: 'user', text: 'thanks, common words here' },
          { id: 'a-a2', type: 'assistant', text: 'welcome' },
        ],
      })
      .expect(201);
    await http()
      .post('/v1/sessions/a-only/events')
      .set(A)
      .send({ events: [{ id: 'o1', type: 'user', text: 'only tenant A has this session' }] })
      .expect(201);
    const c = await http()
      .post('/v1/sessions/shared/compactions')
      .set(A)
      .send({ strategy: { type: 'turn-window', maxTurns: 1 } })
      .expect(200);
    expect(c.body.outcome).toBe('compacted');
    compactionA = c.body.compactionId;
    await http().get(`/v1/sessions/shared/window?minPosition=${c.body.position}`).set(A).expect(200);
  });

  async function aWindowIds(): Promise<string[]> {
    const res = await harness.http().get('/v1/sessions/shared/window').set(A).expect(200);
    return res.body.events.map((e: { id: string }) => e.id);
  }

  it.each(ROUTES.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r] as const))(
    '%s needs a known key (401 without, 401 with a wrong one), writes nothing',
    async (_n, r) => {
      const head = await harness.service.store.headPosition();
      for (const headers of [{}, { authorization: 'Bearer not-a-configured-key' }, { 'x-api-key': 'not-a-configured-key' }, { authorization: KEY_A }]) {
        let req = harness.http()[r.method](r.path).set(headers);
        if (r.body) req = req.send(r.body);
        const res = await req;
        expect({ headers, status: res.status, code: res.body.code }).toEqual({ headers, status: 401, code: 'unauthorized' });
        expect(res.body.message).toMatch(/key/i);
      }
      expect(await harness.service.store.headPosition()).toBe(head);
    },
  );

  it('accepts the key as a bearer token or as x-api-key', async () => {
    await harness.http().get('/v1/sessions/shared/window').set(A).expect(200);
    await harness.http().get('/v1/sessions/shared/window').set({ 'x-api-key': KEY_A }).expect(200);
  });

  it("does not let tenant B read tenant A's session (window, past window, log, compactions)", async () => {
    for (const path of [
      '/v1/sessions/shared/window',
      '/v1/sessions/shared/window?format=openai',
      '/v1/sessions/shared/window?atRevision=3',
      '/v1/sessions/shared/events',
      '/v1/sessions/shared/compactions',
      `/v1/sessions/shared/compactions/${compactionA}`,
    ]) {
      const res = await harness.http().get(path).set(B);
      expect({ path, status: res.status, code: res.body.code }).toEqual({ path, status: 404, code: 'session_not_found' });
      expect(JSON.stringify(res.body)).not.toContain(SECRET_A);
    }
  });

  it("does not let tenant B compact or erase tenant A's session", async () => {
    const head = await harness.service.store.headPosition();
    const compact = await harness
      .http()
      .post('/v1/sessions/a-only/compactions')
      .set(B)
      .send({ strategy: { type: 'sliding-window', maxEvents: 1 } });
    expect({ status: compact.status, code: compact.body.code }).toEqual({ status: 404, code: 'session_not_found' });
    const erase = await harness.http().delete('/v1/sessions/a-only').set(B);
    expect({ status: erase.status, code: erase.body.code }).toEqual({ status: 404, code: 'session_not_found' });
    expect(await harness.service.store.headPosition()).toBe(head);
    await harness.http().get('/v1/sessions/a-only/window').set(A).expect(200);
  });

  it("keeps tenant B's appends to the same session id apart from tenant A's", async () => {
    const before = await aWindowIds();
    // B cannot answer A's tool call: it is not in B's session
    const orphan = await harness
      .http()
      .post('/v1/sessions/shared/events')
      .set(B)
      .send({ events: [{ id: 'b-t1', type: 'tool', responses: [{ toolCallId: 'callA', name: 'save_passport', data: '{}' }] }] });
    expect({ status: orphan.status, code: orphan.body.code }).toEqual({ status: 422, code: 'unknown_tool_call' });
    const viaMessages = await harness
      .http()
      .post('/v1/sessions/shared/messages')
      .set(B)
      .send({ messages: [{ role: 'tool', tool_call_id: 'callA', content: '{}' }] });
    expect(viaMessages.status).toBe(422);
    // the same client id with other content is B's own event, not a conflict with A's
    const own = await harness
      .http()
      .post('/v1/sessions/shared/events')
      .set(B)
      .send({ events: [{ id: 'a-u1', type: 'user', text: 'tenant B speaking, common words here' }] })
      .expect(201);
    // B compacts its own session of that id; A's is untouched
    await harness
      .http()
      .post('/v1/sessions/shared/compactions')
      .set(B)
      .send({ strategy: { type: 'sliding-window', maxEvents: 1 } })
      .expect(200);
    const bWindow = await harness.http().get(`/v1/sessions/shared/window?minPosition=${own.body.position}`).set(B).expect(200);
    expect(bWindow.body.events.map((e: { id: string; text: string }) => [e.id, e.text])).toEqual([['a-u1', 'tenant B speaking, common words here']]);
    expect(await aWindowIds()).toEqual(before);
    const aLog = await harness.http().get('/v1/sessions/shared/events?limit=1000').set(A).expect(200);
    expect(JSON.stringify(aLog.body)).not.toContain('tenant B speaking');
  });

  it("never returns another tenant's events from recall", async () => {
    const head = await harness.service.store.headPosition();
    await harness.http().get(`/v1/sessions/shared/window?minPosition=${head}`).set(A).expect(200);
    for (const query of [
      `q=${SECRET_A}`,
      `q=${SECRET_A}&sessionId=shared`,
      `q=${SECRET_A}&archived=true`,
      'q=passport',
      `q=${SECRET_A}&compactionId=${compactionA}`,
    ]) {
      const res = await harness.http().get(`/v1/recall?${query}`).set(B).expect(200);
      expect({ query, hits: res.body.items }).toEqual({ query, hits: [] });
    }
    const a = await harness.http().get(`/v1/recall?q=${SECRET_A}`).set(A).expect(200);
    expect(a.body.items.length).toBeGreaterThan(0);
    // a word both tenants used: each sees only their own events
    const bCommon = await harness.http().get('/v1/recall?q=common').set(B).expect(200);
    expect(bCommon.body.items.length).toBeGreaterThan(0);
    expect(JSON.stringify(bCommon.body)).not.toContain('thanks');
    const aCommon = await harness.http().get('/v1/recall?q=common').set(A).expect(200);
    expect(JSON.stringify(aCommon.body)).not.toContain('tenant B speaking');
  });
});

describe('rate limits', () => {
  const KEY_A2 = 'alpha-second-key-77c1';
  const harness = useService({ env: { API_KEYS: `${KEY_A}:tenantA,${KEY_B}:tenantB,${KEY_A2}:tenantA`, RATE_LIMIT_PER_MINUTE: '3' } });

  it('answers 429 rate_limited once a tenant has used its requests per minute, per tenant', async () => {
    for (let i = 0; i < 3; i++) expect((await harness.http().get('/v1/recall?q=anything').set(A)).status).toBe(200);
    const limited = await harness.http().get('/v1/recall?q=anything').set(A);
    expect({ status: limited.status, code: limited.body.code }).toEqual({ status: 429, code: 'rate_limited' });
    expect(limited.body.message).toMatch(/slow down|retry/);
    const head = await harness.service.store.headPosition();
    const write = await harness
      .http()
      .post('/v1/sessions/rl/events')
      .set(A)
      .send({ events: [{ id: 'r1', type: 'user', text: 'hi' }] });
    expect(write.status).toBe(429);
    expect(await harness.service.store.headPosition()).toBe(head);
    // the tenant's other key spends the same budget (a second key, or an old and a new one during a rotation, is no second budget)
    const secondKey = await harness
      .http()
      .get('/v1/recall?q=anything')
      .set({ Authorization: `Bearer ${KEY_A2}` });
    expect(secondKey.status).toBe(429);
    // its message says the budget is the tenant's, not the key's, with the limit, the variable setting it and when to retry
    const retryAfter = Number(secondKey.headers['retry-after']);
    expect(secondKey.body.message).toBe(
      `too many requests: the budget of tenant tenantA (shared by all of the tenant's API keys) of 3 requests per minute (RATE_LIMIT_PER_MINUTE) is spent: slow down, and retry after ${retryAfter} seconds (Retry-After)`,
    );
    // another tenant has its own budget
    expect((await harness.http().get('/v1/recall?q=anything').set(B)).status).toBe(200);
  });

  // Issue 14: a 429 carries the same X-RateLimit-* headers as the answers before it, and Retry-After.
  it('tells a limited client its budget and when to retry, in headers', async () => {
    const C = { Authorization: `Bearer ${KEY_B}` };
    let last = await harness.http().get('/v1/recall?q=headers').set(C);
    while (last.status === 200) {
      expect(last.headers['x-ratelimit-limit']).toBe('3');
      last = await harness.http().get('/v1/recall?q=headers').set(C);
    }
    expect(last.status).toBe(429);
    expect(last.headers['x-ratelimit-limit']).toBe('3');
    expect(last.headers['x-ratelimit-remaining']).toBe('0');
    for (const name of ['x-ratelimit-reset', 'retry-after']) {
      const seconds = Number(last.headers[name]);
      expect({ name, ok: Number.isInteger(seconds) && seconds > 0 && seconds <= 60 }).toEqual({ name, ok: true });
    }
  });

  // ncnoisy A4: an operator finds the noisy tenant in /metrics; the label's values are the configured tenants and `none`, never a request's text.
  it('labels request counts with the tenant of the key, none without a known key', async () => {
    expect((await harness.http().get('/v1/recall?q=x').set(A)).status).toBe(429);
    expect(
      (
        await harness
          .http()
          .get('/v1/recall?q=x')
          .set({ Authorization: `Bearer ${KEY_A2}` })
      ).status,
    ).toBe(429);
    expect((await harness.http().get('/v1/recall?q=x').set('x-api-key', 'guessed-key-tenantZ')).status).toBe(401);
    expect((await harness.http().get('/v1/sessions/s1').set('x-api-key', 'tenantC')).status).toBe(401);
    const metrics = (await harness.http().get('/metrics')).text;
    const count = (labels: string) =>
      Number(
        metrics
          .split('\n')
          .find((l) => l.startsWith(`http_request_duration_seconds_count{${labels}} `))
          ?.split(' ')[1] ?? 0,
      );
    // tenantA: 3 accepted, then 429s from both its keys (first test), and 2 here
    expect(count('method="GET",route="/v1/recall",status="200",tenant="tenantA"')).toBe(3);
    expect(count('method="GET",route="/v1/recall",status="429",tenant="tenantA"')).toBeGreaterThanOrEqual(3);
    expect(count('method="GET",route="/v1/recall",status="200",tenant="tenantB"')).toBeGreaterThanOrEqual(3);
    expect(count('method="GET",route="/v1/recall",status="401",tenant="none"')).toBe(1);
    const tenants = new Set([...metrics.matchAll(/^http_request_duration_seconds_count\{[^}]*tenant="([^"]*)"/gm)].map((m) => m[1]));
    expect([...tenants].sort()).toEqual(['none', 'tenantA', 'tenantB']);
  });
});

// Issue 17 hardening: an unknown key is not a budget of its own; guesses spend the address's budget.
describe('API-key guessing', () => {
  const harness = useService({ env: { API_KEYS: `${KEY_A}:tenantA`, RATE_LIMIT_PER_MINUTE: '5' } });

  it('answers 429 rate_limited once an address has spent its budget on wrong keys, each different', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await harness.http().get('/v1/recall?q=x').set('authorization', `Bearer wrong-key-${i}-guess`)).status);
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.slice(5)).toEqual(Array(7).fill(429));
    const limited = await harness.http().get('/v1/recall?q=x').set('x-api-key', 'another-wrong-key');
    expect({ status: limited.status, code: limited.body.code }).toEqual({ status: 429, code: 'rate_limited' });
    // the budget spent is the address's, named with its limit and variable, never a tenant's
    expect(limited.body.message).toBe(
      `too many requests: the budget of this client address (a request without a known API key spends its address's) of 5 requests per minute (RATE_LIMIT_PER_MINUTE) is spent: slow down, and retry after ${Number(limited.headers['retry-after'])} seconds (Retry-After)`,
    );
    // a configured key keeps its own budget
    expect((await harness.http().get('/v1/recall?q=x').set(A)).status).toBe(200);
  });
});

describe('rate limits in open development mode', () => {
  const harness = useService({ env: { RATE_LIMIT_PER_MINUTE: '2' } });

  it('limits per client address', async () => {
    for (let i = 0; i < 2; i++) expect((await harness.http().get('/v1/recall?q=x')).status).toBe(200);
    const limited = await harness.http().get('/v1/recall?q=x');
    expect({ status: limited.status, code: limited.body.code }).toEqual({ status: 429, code: 'rate_limited' });
  });

  // Issue 17, item 3: a liveness probe or a scraper on a busy instance is never answered 429,
  // and calling them does not use up the address's budget for the API.
  // Issue 14: every answer is counted by status, also those no controller gives.
  it('counts 404, 413, 415 and 429 answers in /metrics', async () => {
    await harness.http().get('/no/such/route');
    await harness.http().post('/v1/sessions/m/events').set('content-type', 'text/plain').send('hello');
    await harness
      .http()
      .post('/v1/sessions/m/events')
      .set('content-type', 'application/json')
      .send(JSON.stringify({ events: [{ id: 'big', type: 'user', text: 'x'.repeat(harness.service.config.maxBodyBytes) }] }));
    while ((await harness.http().get('/v1/recall?q=x')).status !== 429);
    const metrics = (await harness.http().get('/metrics')).text;
    for (const status of ['404', '413', '415', '429']) {
      expect({ status, counted: new RegExp(`http_request_duration_seconds_count\\{[^}]*status="${status}"[^}]*\\} [1-9]`).test(metrics) }).toEqual({
        status,
        counted: true,
      });
    }
  });

  it('never throttles /health or /metrics, before or after the budget is spent', async () => {
    for (let i = 0; i < 20; i++) {
      expect((await harness.http().get('/health')).status).toBe(200);
      expect((await harness.http().get('/metrics')).status).toBe(200);
    }
  });
});

describe('rate limits behind a proxy (TRUST_PROXY)', () => {
  const behindProxy = useService({ env: { RATE_LIMIT_PER_MINUTE: '2', TRUST_PROXY: '1' } });
  const direct = useService({ env: { RATE_LIMIT_PER_MINUTE: '2' } });
  const spend = async (harness: typeof direct, forwardedFor: string) => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await harness.http().get('/v1/recall?q=x').set('X-Forwarded-For', forwardedFor)).status);
    return statuses;
  };

  it('with TRUST_PROXY=1, each client address the proxy forwards has its own budget', async () => {
    expect(await spend(behindProxy, '203.0.113.7')).toEqual([200, 200, 429]);
    expect(await spend(behindProxy, '203.0.113.8')).toEqual([200, 200, 429]);
  });

  it('without it, X-Forwarded-For is not believed: every request counts against the peer', async () => {
    expect(await spend(direct, '203.0.113.7')).toEqual([200, 200, 429]);
    expect(await spend(direct, '203.0.113.8')).toEqual([429, 429, 429]);
  });
});

describe('operations routes with API keys and a small budget', () => {
  const harness = useService({ env: { API_KEYS: `${KEY_A}:tenantA`, RATE_LIMIT_PER_MINUTE: '1' } });

  it('answers /health and /metrics without a key and without spending the budget', async () => {
    for (let i = 0; i < 10; i++) {
      expect((await harness.http().get('/health')).status).toBe(200);
      expect((await harness.http().get('/metrics')).status).toBe(200);
    }
    // the key's one request per minute is still there
    expect((await harness.http().get('/v1/recall?q=x').set(A)).status).toBe(200);
    expect((await harness.http().get('/v1/recall?q=x').set(A)).status).toBe(429);
  });
});
