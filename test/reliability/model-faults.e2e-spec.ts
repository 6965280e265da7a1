/**
 * Model faults (issue 7 item 4) against a local OpenAI-compatible server: a timeout, HTTP 500, 429
 * with Retry-After, a blank message, malformed JSON, a refusal, a reply with a lone surrogate. The session is unchanged but for its
 * superseded system messages, a CompactionFailed event records what happened (without message text
 * or the key), retries follow the `openai` client's policy (SUMMARIZER_MAX_RETRIES), after K
 * consecutive failures auto-compaction backs off instead of calling the model on every append, a
 * failed compaction asked again is a new pass (a transient fault does not stick), a 429 pauses every
 * session's calls until the wait it asked for is over, and a successful compaction on unchanged
 * input never produces a second decision.
 */
import { AutoCompactionScheduler, COMPACTION_COMPLETED, COMPACTION_FAILED, EVENTS_ARCHIVED, SUMMARY_INSERTED, summarizerFromEnv } from '@lib/session';
import { Logger } from '@nestjs/common';
import { useService } from '../support/service-harness';
import { FakeOpenAiServer, type FakeFault } from '../support/fake-openai-server';
import { streamOf } from '../support/log-checks';

const SECRET = 'PINEAPPLE-ORBIT-7731';
const API_KEY = 'sk-model-fault-test-0123456789';
const MAX_RETRIES = 2;
const STRATEGY = { type: 'recursive-summarization', maxEventsToKeep: 4, overlapSize: 1 };

function conversation(prefix: string) {
  const events: Array<Record<string, unknown>> = [
    { id: `${prefix}-s1`, type: 'system', text: 'You are a travel agent (old prompt).' },
    { id: `${prefix}-s2`, type: 'system', text: 'You are a careful travel agent.' },
  ];
  for (let n = 0; n < 6; n++) {
    events.push({ id: `${prefix}-u${n}`, type: 'user', text: `turn ${n}: my code word is ${SECRET}` });
    events.push({ id: `${prefix}-a${n}`, type: 'assistant', text: `noted ${n}` });
  }
  return events;
}

interface FaultCase {
  /** The case's name (the fault's, by default). */
  name?: string;
  /** A fault, or a reply text (an unusable one). */
  fault: FakeFault | string;
  /** Requests the model endpoint sees for one compaction: 1 + retries when the client retries. */
  requests: number;
  reason: RegExp;
  /** The failure's kind (`failureKind`), recorded and answered beside the reason. */
  kind: string;
}

const FAULTS: FaultCase[] = [
  { fault: { fault: 'timeout' }, requests: 1 + MAX_RETRIES, reason: /timed out/, kind: 'timeout' },
  { fault: { fault: 'status500' }, requests: 1 + MAX_RETRIES, reason: /HTTP 500/, kind: 'endpoint_error' },
  { fault: { fault: 'status429', retryAfterSeconds: 1 }, requests: 1 + MAX_RETRIES, reason: /rate limited: HTTP 429/, kind: 'rate_limited' },
  { fault: { fault: 'status401' }, requests: 1, reason: /rejected the credentials: HTTP 401 \(invalid_api_key\); check OPENAI_API_KEY$/, kind: 'credentials' },
  { fault: { fault: 'status404' }, requests: 1, reason: /HTTP 404 .*check SUMMARIZER_MODEL/, kind: 'model_not_found' },
  { fault: { fault: 'blank' }, requests: 1, reason: /blank reply/, kind: 'invalid_reply' },
  { fault: { fault: 'malformed-json' }, requests: 1, reason: /malformed/i, kind: 'invalid_reply' },
  { fault: { fault: 'refusal' }, requests: 1, reason: /refused/, kind: 'refused' },
  { fault: { fault: 'content-filter' }, requests: 1, reason: /content_filter/, kind: 'refused' },
  { fault: { fault: 'no-choices' }, requests: 1, reason: /no choices/, kind: 'invalid_reply' },
  // a reply that is not valid Unicode (ncintl F2): the service refuses such text on input, so never stores it
  {
    name: 'lone-surrogate',
    fault: 'Summary \ud800 end',
    requests: 1,
    reason: /reply is not valid Unicode: a lone UTF-16 surrogate at code unit 8/,
    kind: 'invalid_reply',
  },
  { name: 'half-emoji-at-end', fault: 'Summary cut in an emoji \ud83d', requests: 1, reason: /not valid Unicode/, kind: 'invalid_reply' },
];

describe('model faults', () => {
  const fake = new FakeOpenAiServer();
  beforeAll(() => fake.start());
  const harness = useService(() => ({
    summarizer: summarizerFromEnv({
      OPENAI_BASE_URL: fake.url,
      OPENAI_API_KEY: API_KEY,
      // The `timeout` fault waits this long per attempt; a working reply must come within it on a loaded CI machine (300 ms
      // was close: the fake's answer and the service's turn share 2 cores with the rest of the suite).
      SUMMARIZER_TIMEOUT_MS: '1500',
      SUMMARIZER_MAX_RETRIES: String(MAX_RETRIES),
    }),
    env: { AUTO_COMPACTION_MAX_FAILURES: '2', AUTO_COMPACTION_BACKOFF_MS: '3600000' },
  }));
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  async function windowIds(session: string, position?: string): Promise<string[]> {
    const res = await harness
      .http()
      .get(`/v1/sessions/${session}/window${position ? `?minPosition=${position}` : ''}`)
      .expect(200);
    return res.body.events.map((e: { id: string }) => e.id);
  }

  it.each(FAULTS.map((f) => [f.name ?? (typeof f.fault === 'string' ? f.fault : f.fault.fault), f] as const))(
    '%s: only superseded system messages leave, the failure is recorded, retries follow the client policy',
    async (name, f) => {
      const session = `fault-${name}`;
      fake.setDefault(f.fault);
      const appended = await harness
        .http()
        .post(`/v1/sessions/${session}/events`)
        .send({ events: conversation(session) })
        .expect(201);
      const before = await windowIds(session, appended.body.position);

      const res = await harness.http().post(`/v1/sessions/${session}/compactions`).send({ strategy: STRATEGY }).expect(200);
      expect(res.body.outcome).toBe('failed');
      expect(res.body.failure.reason).toMatch(f.reason);
      expect(res.body.failure.failureKind).toBe(f.kind);
      expect(fake.calls).toBe(f.requests);

      // the window is unchanged but for the superseded system message
      expect(await windowIds(session, res.body.position)).toEqual(before.filter((id) => id !== `${session}-s1`));

      // the log: one failed decision that archived only the superseded system message, no summary
      const log = await harness.service.store.readStream(streamOf(session));
      const decisions = log.filter((e) => e.type !== 'ConversationEventAppended');
      expect(decisions.map((e) => e.type)).toEqual([EVENTS_ARCHIVED, COMPACTION_FAILED]);
      expect((decisions[0].data as { archivedIds: string[] }).archivedIds).toEqual([`${session}-s1`]);
      const failed = decisions[1].data as { reason: string; stage: string; failureKind?: string };
      expect(failed.stage).toBe('summarize');
      expect(failed.reason).toMatch(f.reason);
      expect(failed.failureKind).toBe(f.kind);

      // the compaction history (the audit API) shows the kind beside the reason, the list and the item alike
      const item = await harness.http().get(`/v1/sessions/${session}/compactions/${res.body.compactionId}?minPosition=${res.body.position}`).expect(200);
      expect(item.body.failure).toEqual({ stage: 'summarize', reason: res.body.failure.reason, failureKind: f.kind });
      const history = await harness.http().get(`/v1/sessions/${session}/compactions?minPosition=${res.body.position}`).expect(200);
      expect(history.body.compactions.map((c: { failure: unknown }) => c.failure)).toEqual([item.body.failure]);
      const recorded = JSON.stringify(failed);
      expect(recorded).not.toContain(SECRET);
      expect(recorded).not.toContain(API_KEY);
      expect(log.some((e) => e.type === SUMMARY_INSERTED)).toBe(false);

      // the same command again is a new pass (the fault may have been transient): a new call, a new decision
      fake.setDefault('SUMMARY: the user shared a code word.');
      const again = await harness.http().post(`/v1/sessions/${session}/compactions`).send({ strategy: STRATEGY }).expect(200);
      expect(again.body).toMatchObject({ outcome: 'compacted', recorded: true });
      expect(again.body.replayed).toBeUndefined();
      expect(again.body.compactionId).not.toBe(res.body.compactionId);
      expect(fake.calls).toBe(f.requests + 1);
    },
  );

  it('records one decision for concurrent identical compactions on unchanged input', async () => {
    fake.setDefault({ fault: 'status500' });
    await harness
      .http()
      .post('/v1/sessions/same-input/events')
      .send({ events: conversation('same-input') })
      .expect(201);
    const failedPasses = async () => {
      const metrics = (await harness.http().get('/metrics').expect(200)).text;
      // a failed pass's reason label is its failureKind (a closed set)
      return Number(/^compactions_total\{origin="command",outcome="failed",reason="endpoint_error"\} (\d+)$/m.exec(metrics)?.[1] ?? 0);
    };
    const before = await failedPasses();
    const answers = await Promise.all(Array.from({ length: 4 }, () => harness.http().post('/v1/sessions/same-input/compactions').send({ strategy: STRATEGY })));
    for (const a of answers) expect(a.body.outcome).toBe('failed');
    const log = await harness.service.store.readStream(streamOf('same-input'));
    expect(log.filter((e) => e.type === COMPACTION_FAILED)).toHaveLength(1);
    expect(new Set(answers.map((a) => a.body.compactionId)).size).toBe(1);
    // one pass, shared by the 4 requests in this process: the same answer for each, counted once (DESIGN §3.6)
    for (const a of answers) expect(a.body).toEqual(answers[0].body);
    expect((await failedPasses()) - before).toBe(1);
  });

  it('never records a second decision when a successful compaction is repeated on unchanged input', async () => {
    fake.setDefault('SUMMARY: the user shared a code word.');
    await harness
      .http()
      .post('/v1/sessions/repeat-ok/events')
      .send({ events: conversation('repeat-ok') })
      .expect(201);
    for (const strategy of [
      STRATEGY,
      { type: 'rolling-summary', keepTurns: 1, summarizeAtTokens: 10 },
      { type: 'sliding-window', maxEvents: 3 },
      { type: 'token-count', maxTokens: 40 },
      { type: 'turn-window', maxTurns: 1 },
    ]) {
      const first = await harness.http().post('/v1/sessions/repeat-ok/compactions').send({ strategy }).expect(200);
      expect(['compacted', 'noop']).toContain(first.body.outcome);
      const head = await harness.service.store.headPosition();
      const calls = fake.calls;
      const second = await harness.http().post('/v1/sessions/repeat-ok/compactions').send({ strategy }).expect(200);
      expect({ strategy, head: await harness.service.store.headPosition(), calls: fake.calls }).toEqual({ strategy, head, calls });
      expect(['noop', 'not-triggered', 'compacted']).toContain(second.body.outcome);
      if (second.body.outcome === 'compacted') expect(second.body.replayed).toBe(true);
    }
    const log = await harness.service.store.readStream(streamOf('repeat-ok'));
    const bases = log.filter((e) => e.type === COMPACTION_COMPLETED).map((e) => (e.data as { basedOnRevision: string }).basedOnRevision);
    expect(new Set(bases).size).toBe(bases.length);
  });

  // Newcomer ncllmfaults F5: against an endpoint answering 429, 20 sessions made 180 model calls in 10.9 s, each call and session backing off on its own.
  it("after a 429, pauses every session's passes, commanded and automatic, until the wait it asked for is over; /metrics shows the pause", async () => {
    const sessions = ['pause-a', 'pause-b', 'pause-c', 'pause-auto'];
    for (const session of sessions)
      await harness
        .http()
        .post(`/v1/sessions/${session}/events`)
        .send({ events: conversation(session) })
        .expect(201);
    // an automatic pass runs at the policy's next append
    await harness.http().put('/v1/sessions/pause-auto/policy').send({ strategy: STRATEGY }).expect(200);
    const arrivals: number[] = [];
    fake.setDefault((_request, i) => {
      arrivals.push(Date.now());
      return i === 0 ? { fault: 'status429', retryAfterSeconds: 2 } : 'SUMMARY: the user shared a code word.';
    });
    const pauseSeconds = async () => Number(/^summarizer_rate_limit_pause_seconds (\S+)$/m.exec((await harness.http().get('/metrics').expect(200)).text)?.[1]);
    const compact = (session: string) =>
      harness
        .http()
        .post(`/v1/sessions/${session}/compactions`)
        .send({ strategy: STRATEGY })
        .then((res) => res);
    expect(await pauseSeconds()).toBe(0);
    const first = compact('pause-a');
    while (arrivals.length === 0) await new Promise((r) => setTimeout(r, 5));
    let paused = await pauseSeconds();
    while (paused === 0 && arrivals.length < 2) paused = await pauseSeconds();
    expect(paused).toBeGreaterThan(0);
    expect(paused).toBeLessThanOrEqual(2);
    // during the pause: two more commanded passes, and an automatic one (an append to the session with a policy)
    const scheduler = harness.service.app.get(AutoCompactionScheduler);
    const others = Promise.all([compact('pause-b'), compact('pause-c')]);
    await harness
      .http()
      .post('/v1/sessions/pause-auto/events')
      .send({ events: [{ id: 'pause-auto-more', type: 'user', text: 'one more' }] })
      .expect(201);
    for (const res of [await first, ...(await others)]) expect(res.body).toMatchObject({ outcome: 'compacted' });
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setImmediate(r));
      await scheduler.whenIdle();
    }
    const auto = await harness.service.store.readStream(streamOf('pause-auto'));
    expect(auto.filter((e) => e.type === SUMMARY_INSERTED)).toHaveLength(1);
    // one 429, then one call per pass (pause-a's a retry): none sent before the 2 s the endpoint asked for were over
    expect(fake.calls).toBe(5);
    for (const at of arrivals.slice(1)) expect(at - arrivals[0]).toBeGreaterThanOrEqual(2000);
    expect(await pauseSeconds()).toBe(0);
  });

  it('backs off auto-compaction after K consecutive failures instead of calling the model on every append', async () => {
    fake.setDefault({ fault: 'status500' });
    const scheduler = harness.service.app.get(AutoCompactionScheduler);
    const settle = async () => {
      for (let i = 0; i < 5; i++) {
        await new Promise((r) => setImmediate(r));
        await scheduler.whenIdle();
      }
    };
    await harness
      .http()
      .post('/v1/sessions/backoff/events')
      .send({ events: conversation('backoff') })
      .expect(201);
    await harness.http().put('/v1/sessions/backoff/policy').send({ strategy: STRATEGY }).expect(200);
    await settle();
    fake.reset();
    for (let n = 0; n < 10; n++) {
      await harness
        .http()
        .post('/v1/sessions/backoff/events')
        .send({
          events: [
            { id: `more-u${n}`, type: 'user', text: `more ${n}` },
            { id: `more-a${n}`, type: 'assistant', text: `ok ${n}` },
          ],
        })
        .expect(201);
      await settle();
    }
    const log = await harness.service.store.readStream(streamOf('backoff'));
    const failures = log.filter((e) => e.type === COMPACTION_FAILED);
    // K = AUTO_COMPACTION_MAX_FAILURES = 2 failed passes, each 1 + MAX_RETRIES requests; then no more calls
    expect(failures.length).toBe(2);
    expect(fake.calls).toBe(2 * (1 + MAX_RETRIES));
    // a manual command still reaches the model (backoff is for automatic passes only)
    const manual = await harness.http().post('/v1/sessions/backoff/compactions').send({ strategy: STRATEGY }).expect(200);
    expect(manual.body.outcome).toBe('failed');
    expect(fake.calls).toBe(3 * (1 + MAX_RETRIES));
  });
});

describe('model faults in the service log (a service of its own: the failure lines are rate-limited per process)', () => {
  const fake = new FakeOpenAiServer();
  beforeAll(() => fake.start());
  const harness = useService(() => ({
    summarizer: summarizerFromEnv({ OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: API_KEY, SUMMARIZER_TIMEOUT_MS: '2000', SUMMARIZER_MAX_RETRIES: '0' }),
    env: { AUTO_COMPACTION_MAX_FAILURES: '2', AUTO_COMPACTION_BACKOFF_MS: '3600000' },
  }));
  afterAll(() => fake.close());

  it('tells operators: one warn line per failed pass (reason, never message text nor key), one line entering and one leaving backoff, the backoff gauge and /health', async () => {
    fake.setDefault({ fault: 'status401' });
    const lines: string[] = [];
    for (const level of ['log', 'warn'] as const) {
      jest.spyOn(Logger.prototype, level).mockImplementation(function (this: Logger, ...args: unknown[]) {
        // a line with fields is logged as an object: its message, then its fields
        const [first] = args;
        const fields = typeof first === 'object' && first !== null ? (first as Record<string, unknown>) : null;
        lines.push(fields ? `${level} ${String(fields.msg)} ${JSON.stringify({ ...fields, msg: undefined })}` : `${level} ${String(first)}`);
      });
    }
    const scheduler = harness.service.app.get(AutoCompactionScheduler);
    const settle = async () => {
      for (let i = 0; i < 5; i++) {
        await new Promise((r) => setImmediate(r));
        await scheduler.whenIdle();
      }
    };
    const gauge = async () => Number(/^auto_compactions_backing_off (\d+)$/m.exec((await harness.http().get('/metrics').expect(200)).text)?.[1]);
    const before = await gauge();
    try {
      await harness
        .http()
        .post('/v1/sessions/ops-401/events')
        .send({ events: conversation('ops') })
        .expect(201);
      await harness.http().put('/v1/sessions/ops-401/policy').send({ strategy: STRATEGY }).expect(200);
      await settle();
      for (let n = 0; n < 4; n++) {
        await harness
          .http()
          .post('/v1/sessions/ops-401/events')
          .send({ events: [{ id: `ops-more-u${n}`, type: 'user', text: `more ${n}` }] })
          .expect(201);
        await settle();
      }
      const failed = lines.filter((l) => l.includes('compaction pass failed: session "ops-401"'));
      // AUTO_COMPACTION_MAX_FAILURES = 2: two automatic passes, then the session backs off (no third call).
      expect(failed).toHaveLength(2);
      for (const line of failed)
        expect(line).toMatch(
          /^warn compaction pass failed: session "ops-401" \(tenant "default"\), compaction \S+, origin auto, stage summarize: summarizer failed: the model endpoint rejected the credentials: HTTP 401 \(invalid_api_key\); check OPENAI_API_KEY \{"failureKind":"credentials"\}$/,
        );
      expect(lines.filter((l) => l.includes('auto-compaction of session "ops-401"'))).toEqual([
        expect.stringMatching(
          /^warn auto-compaction of session "ops-401" \(tenant "default"\) backs off after 2 failed compactions in a row: next automatic attempt at the first append after \S+Z \(3600000 ms after the last failure/,
        ),
      ]);
      expect(lines.join('\n')).not.toMatch(new RegExp(`${API_KEY}|Incorrect API key|${SECRET}`));
      expect(await gauge()).toBe(before + 1);
      const health = (await harness.http().get('/health').expect(200)).body;
      expect(health.autoCompactionsBackingOff).toBe(before + 1);
      expect(health.summarizer.lastFailure).toEqual({
        reason: 'summarizer failed: the model endpoint rejected the credentials: HTTP 401 (invalid_api_key); check OPENAI_API_KEY',
        failureKind: 'credentials',
        at: expect.any(String),
      });

      // The key is fixed: a commanded pass compacts, and the session leaves backoff at once (newcomer ncllm65 F1: only
      // at its next append before), the gauge and /health with it.
      fake.setDefault('a recap of the trip so far');
      const manual = await harness.http().post('/v1/sessions/ops-401/compactions').send({ strategy: STRATEGY }).expect(200);
      expect(manual.body.outcome).toBe('compacted');
      expect(lines.filter((l) => l.includes('leaves backoff'))).toEqual([
        expect.stringMatching(/^log auto-compaction of session "ops-401" \(tenant "default"\) leaves backoff after \d+ s: a compaction succeeded$/),
      ]);
      expect(await gauge()).toBe(before);
      expect((await harness.http().get('/health').expect(200)).body.autoCompactionsBackingOff).toBe(before);
      await harness
        .http()
        .post('/v1/sessions/ops-401/events')
        .send({ events: [{ id: 'ops-after', type: 'user', text: 'after' }] })
        .expect(201);
      await settle();
      expect(lines.filter((l) => l.includes('leaves backoff'))).toHaveLength(1);

      // Two more sessions back off; one has its policy cleared, the other is erased: each leaves backoff at once, with its line
      // (newcomer ncllm65 F1: neither ever left it, the gauge stayed up until a restart).
      fake.setDefault({ fault: 'status401' });
      for (const id of ['ops-clear', 'ops-erase']) {
        await harness
          .http()
          .post(`/v1/sessions/${id}/events`)
          .send({ events: conversation(id) })
          .expect(201);
        await harness.http().put(`/v1/sessions/${id}/policy`).send({ strategy: STRATEGY }).expect(200);
        await settle();
        for (let n = 0; n < 2; n++) {
          await harness
            .http()
            .post(`/v1/sessions/${id}/events`)
            .send({ events: [{ id: `${id}-more-u${n}`, type: 'user', text: `more ${n}` }] })
            .expect(201);
          await settle();
        }
      }
      expect(await gauge()).toBe(before + 2);
      await harness.http().put('/v1/sessions/ops-clear/policy').send({ strategy: null }).expect(200);
      await harness.http().delete('/v1/sessions/ops-erase').expect(200);
      expect(lines.filter((l) => /leaves backoff/.test(l) && /ops-(clear|erase)/.test(l))).toEqual([
        expect.stringMatching(/^log auto-compaction of session "ops-clear" \(tenant "default"\) leaves backoff after \d+ s: its policy was removed$/),
        expect.stringMatching(/^log auto-compaction of session "ops-erase" \(tenant "default"\) leaves backoff after \d+ s: the session was erased$/),
      ]);
      expect(await gauge()).toBe(before);
      // What every call sent (README "What a call sends"): model and messages, nothing else (no stream, max_tokens, temperature).
      expect(fake.requests.length).toBeGreaterThanOrEqual(3);
      for (const request of fake.requests) {
        expect(Object.keys(request.body).sort()).toEqual(['messages', 'model']);
        expect(request.messages.map((m) => m.role)).toEqual(['system', 'user']);
      }
    } finally {
      jest.restoreAllMocks();
    }
  });
});
