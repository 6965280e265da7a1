/**
 * A model endpoint that refuses connections (nothing listens on its port): the pass fails at the
 * summarize stage, and the compaction audit records the summarizer with `calls: 0` and zero
 * tokens, since no request reached a model (it recorded one call).
 * Runtime: about a second (in-process service, SQLite).
 */
import * as net from 'node:net';
import { OpenAiSummarizer } from '@lib/session';
import { startService, type Harness } from '../support/service-harness';

jest.setTimeout(30_000);

/** A local port nothing listens on: one the kernel handed out, then closed. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', () => listening()));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((closed) => server.close(() => closed()));
  return port;
}

describe('a summarizer endpoint that refuses connections', () => {
  let harness: Harness;
  beforeAll(async () => {
    const summarizer = new OpenAiSummarizer({ baseURL: `http://127.0.0.1:${await closedPort()}/v1`, maxRetries: 1 });
    harness = await startService({ summarizer });
  });
  afterAll(async () => harness.stop());

  it('fails the pass and records no model call in the audit', async () => {
    const events = Array.from({ length: 6 }, (_, i) => ({ id: `m${i}`, type: i % 2 ? 'assistant' : 'user', text: `message ${i}` }));
    await harness.http().post('/v1/sessions/refused/events').send({ events }).expect(201);
    const pass = await harness
      .http()
      .post('/v1/sessions/refused/compactions')
      .send({ strategy: { type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 0 } });
    expect(pass.body).toMatchObject({ outcome: 'failed' });
    const [item] = (await harness.http().get('/v1/sessions/refused/compactions').expect(200)).body.compactions;
    expect(item).toMatchObject({
      outcome: 'failed',
      failure: { stage: 'summarize', reason: expect.stringMatching(/could not reach the model endpoint/) },
      summarizer: { kind: 'openai-compatible', calls: 0, usage: { promptTokens: 0, completionTokens: 0 }, discarded: null },
    });
  });
});
