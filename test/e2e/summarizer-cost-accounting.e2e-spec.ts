/**
 * Summarizer cost accounting against a local OpenAI-compatible server (newcomer findings
 * ncsummarizer F1, F2, F4, F5, A1): every reader of a decision (the answer, the compaction
 * history, the window) agrees on its figures; every HTTP request that reached the endpoint is a
 * call (retried attempts included, `retries` counts them); a call whose usage the endpoint did not
 * report is counted as such, never as a 0-token call; a connection reset in the middle of the
 * answer is retried as a connection error; and the model the endpoint answered with is recorded.
 * Runtime: a few seconds (in-process service, SQLite, retries with short backoff).
 */
import { summarizerFromEnv } from '@lib/session';
import { useService } from '../support/service-harness';
import { FakeOpenAiServer } from '../support/fake-openai-server';

jest.setTimeout(60_000);

const STRATEGY = { type: 'recursive-summarization', maxEventsToKeep: 4, overlapSize: 0 };

function conversation(prefix: string, withSecondSystem = false) {
  const events: Array<Record<string, unknown>> = [{ id: `${prefix}-s1`, type: 'system', text: 'You are a travel agent (old prompt).' }];
  if (withSecondSystem) events.push({ id: `${prefix}-s2`, type: 'system', text: 'You are a careful travel agent.' });
  for (let n = 0; n < 6; n++) {
    events.push({ id: `${prefix}-u${n}`, type: 'user', text: `turn ${n}: please change reservation number ${n} to a later flight` });
    events.push({ id: `${prefix}-a${n}`, type: 'assistant', text: `done ${n}, the flight is now the later one` });
  }
  return events;
}

describe('summarizer cost accounting', () => {
  const fake = new FakeOpenAiServer();
  beforeAll(() => fake.start());
  const harness = useService(() => ({
    summarizer: summarizerFromEnv({
      OPENAI_BASE_URL: fake.url,
      OPENAI_API_KEY: 'sk-cost-test',
      SUMMARIZER_MODEL: 'configured-model',
      SUMMARIZER_TIMEOUT_MS: '400',
      SUMMARIZER_MAX_RETRIES: '2',
    }),
  }));
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  /** Appends a conversation, compacts it, and returns the answer with the decision's history item. */
  async function compact(session: string, withSecondSystem = false) {
    await harness
      .http()
      .post(`/v1/sessions/${session}/events`)
      .send({ events: conversation(session, withSecondSystem) })
      .expect(201);
    const answer = (await harness.http().post(`/v1/sessions/${session}/compactions`).send({ strategy: STRATEGY }).expect(200)).body;
    const history = (await harness.http().get(`/v1/sessions/${session}/compactions?minPosition=${answer.position}`).expect(200)).body;
    return { answer, item: history.compactions[0] };
  }

  async function metric(name: string, labels: string): Promise<number> {
    const text = (await harness.http().get('/metrics').expect(200)).text;
    const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
    return line ? Number(line.split(' ').pop()) : 0;
  }

  it('F2: a failed pass that archived a superseded system message has the same figures in its answer, history and window', async () => {
    fake.setDefault({ fault: 'status500' });
    const { answer, item } = await compact('f2', true);
    const window = (await harness.http().get(`/v1/sessions/f2/window?minPosition=${answer.position}`).expect(200)).body;
    expect(answer).toMatchObject({ outcome: 'failed', archived: ['f2-s1'] });
    expect(answer.tokensAfter).toBe(window.tokens);
    expect(answer.tokensAfter).toBeLessThan(answer.tokensBefore);
    expect(item).toMatchObject({
      outcome: 'failed',
      archivedIds: ['f2-s1'],
      tokensBefore: answer.tokensBefore,
      tokensAfter: answer.tokensAfter,
      tokensSaved: answer.tokensEstimatedSaved,
      keptCount: window.events.length,
    });
    // the same command on the unchanged session replays the decision with the same figures
    const replay = (await harness.http().post('/v1/sessions/f2/compactions').send({ strategy: STRATEGY }).expect(200)).body;
    if (replay.replayed) expect(replay).toMatchObject({ tokensAfter: answer.tokensAfter, tokensEstimatedSaved: answer.tokensEstimatedSaved });
  });

  // The README's definitions (newcomer auditfix 4): compactionCount counts decisions with outcome
  // compacted, not a failed pass that changed the window; erasedEvents every event of the stream.
  it("counts a failed pass that changed the window as failed only, and an erasure's erasedEvents as every event of the session's stream", async () => {
    fake.setDefault({ fault: 'status500' });
    const { answer } = await compact('f2-counts', true);
    expect(answer).toMatchObject({ outcome: 'failed', archived: ['f2-counts-s1'] });
    expect(answer.tokensAfter).toBeLessThan(answer.tokensBefore);
    const summary = (await harness.http().get(`/v1/sessions/f2-counts?minPosition=${answer.position}`).expect(200)).body;
    expect(summary).toMatchObject({ eventCount: conversation('f2-counts', true).length, compactionCount: 0, failedCompactionCount: 1 });
    const erased = (await harness.http().delete('/v1/sessions/f2-counts').expect(200)).body;
    const listed = (await harness.http().get(`/v1/erasures?minPosition=${erased.position}`).expect(200)).body.erasures.find(
      (e: { sessionId: string }) => e.sessionId === 'f2-counts',
    );
    // the conversation events and the failed decision's events: every revision of the stream
    expect(erased.erasedEvents).toBe(Number(summary.revision) + 1);
    expect(erased.erasedEvents).toBe(Number(listed.lastRevision) - Number(listed.firstRevision) + 1);
    expect(erased.erasedEvents).toBeGreaterThan(summary.eventCount);
  });

  it.each([
    ['a timed-out attempt (the endpoint still answers it late)', { reply: 'late', delayMs: 1200, usage: { prompt_tokens: 999, completion_tokens: 99 } }],
    ['an HTTP 500 attempt', { fault: 'status500' as const }],
    ['a connection reset partway through the answer (F5)', { fault: 'reset-mid-answer' as const }],
  ])('F1: a pass whose first attempt was %s counts both requests, the retry and the unknown usage, everywhere', async (name, first) => {
    const labels = 'origin="command",outcome="compacted",reply="used"';
    const before = await Promise.all(
      ['summarizer_calls_total', 'summarizer_retries_total', 'summarizer_unreported_usage_calls_total'].map((m) => metric(m, labels)),
    );
    fake.enqueue(first).setDefault({ reply: 'A recap of the reservations.', usage: { prompt_tokens: 700, completion_tokens: 70 } });
    const session = `f1-${name.split(' ').slice(0, 3).join('-')}`;
    const { answer, item } = await compact(session);
    expect(answer.outcome).toBe('compacted');
    expect(fake.calls).toBe(2);
    const figures = { calls: 2, retries: 1, unreportedUsageCalls: 1 };
    expect(answer.summarizer).toMatchObject({ ...figures, promptTokens: 700, completionTokens: 70 });
    expect(item.summarizer).toMatchObject({ ...figures, usage: { promptTokens: 700, completionTokens: 70 } });
    const after = await Promise.all(
      ['summarizer_calls_total', 'summarizer_retries_total', 'summarizer_unreported_usage_calls_total'].map((m) => metric(m, labels)),
    );
    expect(after.map((v, i) => v - before[i])).toEqual([2, 1, 1]);
  });

  it('F5: a connection reset partway through every answer is retried and fails as a connection error', async () => {
    fake.setDefault({ fault: 'reset-mid-answer' });
    const { answer, item } = await compact('f5');
    expect(fake.calls).toBe(3);
    expect(answer.outcome).toBe('failed');
    expect(answer.failure.reason).toBe(
      'summarizer failed: the connection to the model endpoint was lost while its answer arrived (connection error, 2 retries)',
    );
    expect(item.summarizer).toMatchObject({ calls: 3, retries: 2, unreportedUsageCalls: 3, usage: { promptTokens: 0, completionTokens: 0 } });
  });

  // Newcomer auditfix 3: it said "could not reach the model endpoint", the reason of a call that never connected (calls: 0).
  it('a connection reset after the request was sent, before any answer, says so and counts every attempt', async () => {
    fake.setDefault({ fault: 'reset' });
    const { answer, item } = await compact('f5-reset');
    expect(fake.calls).toBe(3);
    expect(answer.failure.reason).toBe(
      'summarizer failed: the connection to the model endpoint failed after the request was sent (connection error, 2 retries)',
    );
    expect(item.summarizer).toMatchObject({ calls: 3, retries: 2, unreportedUsageCalls: 3 });
  });

  it.each([
    ['absent', null, { promptTokens: 0, completionTokens: 0, unreportedUsageCalls: 1 }],
    [
      'numeric strings',
      { prompt_tokens: '250', completion_tokens: '25', total_tokens: '275' },
      { promptTokens: 250, completionTokens: 25, unreportedUsageCalls: 0 },
    ],
    ['only total_tokens', { total_tokens: 300 }, { promptTokens: 0, completionTokens: 0, unreportedUsageCalls: 1 }],
  ])('F4: a reply whose usage is %s is never recorded as a free call', async (name, rawUsage, expected) => {
    fake.setDefault({ reply: 'A recap of the reservations.', rawUsage });
    const { answer, item } = await compact(`f4-${name.replace(/\W+/g, '-')}`);
    expect(answer.outcome).toBe('compacted');
    expect(answer.summarizer).toMatchObject({ calls: 1, retries: 0, ...expected });
    const { unreportedUsageCalls, ...tokens } = expected;
    expect(item.summarizer).toMatchObject({ calls: 1, retries: 0, unreportedUsageCalls, usage: tokens });
  });
});
