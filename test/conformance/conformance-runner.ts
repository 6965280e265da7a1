/**
 * Runs conformance vectors (format: shared `conformance/README.md`) through the HTTP API of a fresh
 * service instance: append the vector's events, compact (or dry-run a trigger), then check the
 * answer, the window read back, the recorded compaction, and what the summarizer was sent. A local
 * OpenAI-compatible server stands in for the model and answers each vector's `summarizer.reply`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadServiceConfig } from '../../apps/session-service/src/config/service-config';
import { createSessionService, type SessionService } from '../../apps/session-service/src/create-session-service';
import { FakeOpenAiServer } from '../support/fake-openai-server';
import { RunInterrupted, signalName } from '../../apps/replay/src/stop-on-signals';
import { loadVectors, type ConformanceVector } from './conformance-vectors';

/** The verdict on one vector: `problems` is empty when it passed. */
export interface VectorResult {
  id: string;
  file: string;
  problems: string[];
}

/**
 * A vector event as the API takes it. The vector format may mark a missing text with `""`; the
 * API takes `null` for that (it rejects empty strings as a likely client bug). Both format as
 * `[no text content]` (DESIGN §3.1), so costs and decisions are the same. Other fields (a
 * system event's `notice: true`, tool calls, responses) go through as they are.
 */
function asApiEvent(event: ConformanceVector['events'][number]): Record<string, unknown> {
  return event.type !== 'tool' && event.type !== 'summary' && event.text === '' ? { ...event, text: null } : event;
}

interface Http {
  (method: string, url: string, body?: unknown): Promise<{ status: number; body: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any -- answers are checked field by field against the vector;
}

function client(base: string, signal?: AbortSignal): Http {
  return async (method, url, body) => {
    const res = await fetch(base + url, {
      method,
      signal,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
}

function sameList(label: string, actual: unknown, expected: string[], problems: string[]): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) problems.push(`${label}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

/** Checks one vector against a running service; `sessionId` must be fresh. */
async function checkVector(http: Http, fake: FakeOpenAiServer, vector: ConformanceVector, sessionId: string): Promise<string[]> {
  const problems: string[] = [];
  const expect = vector.expect;
  // A vector with no events is a session that exists but is empty: created by setting a policy, then
  // clearing it (a clear alone writes nothing, so it creates no session).
  const append =
    vector.events.length > 0
      ? await http('POST', `/v1/sessions/${sessionId}/events`, { events: vector.events.map(asApiEvent) })
      : (await http('PUT', `/v1/sessions/${sessionId}/policy`, { strategy: { type: 'sliding-window', maxEvents: 1000 } }),
        await http('PUT', `/v1/sessions/${sessionId}/policy`, { strategy: null }));
  if (append.status !== (vector.events.length > 0 ? 201 : 200))
    return [`${vector.events.length > 0 ? 'append' : 'policy'}: HTTP ${append.status} ${JSON.stringify(append.body)}`];

  fake.reset();
  fake.setDefault(vector.summarizer?.reply ?? 'SUMMARY');

  if (!vector.strategy) {
    // Trigger-only vector: a dry run answers `not-triggered` exactly when the trigger does not fire.
    const res = await http('POST', `/v1/sessions/${sessionId}/compactions`, {
      strategy: { type: 'sliding-window', maxEvents: 1 },
      trigger: vector.trigger,
      estimator: vector.estimator,
      dryRun: true,
    });
    if (res.status !== 200) return [`compaction: HTTP ${res.status} ${JSON.stringify(res.body)}`];
    const fired = res.body.outcome !== 'not-triggered';
    if (expect.triggerFired !== undefined && fired !== expect.triggerFired) problems.push(`triggerFired: expected ${expect.triggerFired}, got ${fired}`);
    return problems;
  }

  const res = await http('POST', `/v1/sessions/${sessionId}/compactions`, { strategy: vector.strategy, trigger: vector.trigger, estimator: vector.estimator });
  if (expect.error !== undefined) {
    if (res.status !== 400) problems.push(`expected HTTP 400 naming ${expect.error}, got ${res.status} ${JSON.stringify(res.body)}`);
    else if (!String(res.body.parameter ?? '').includes(expect.error) || !String(res.body.message).includes(expect.error)) {
      problems.push(`error must name ${expect.error}: got ${JSON.stringify(res.body)}`);
    }
    return problems;
  }
  if (res.status !== 200) return [`compaction: HTTP ${res.status} ${JSON.stringify(res.body)}`];
  const answer = res.body;
  if (expect.triggerFired !== undefined && (answer.outcome !== 'not-triggered') !== expect.triggerFired) {
    problems.push(`triggerFired: expected ${expect.triggerFired}, got outcome ${answer.outcome}`);
  }
  const summaryId: string | undefined = answer.summary?.id;
  const keptAsVector = (answer.kept as string[]).map((id) => (id === summaryId ? '$summary' : id));
  if (expect.kept) sameList('kept', keptAsVector, expect.kept, problems);
  if (expect.archived) sameList('archived', answer.archived, expect.archived, problems);
  if (expect.tokensEstimatedSaved !== undefined && answer.tokensEstimatedSaved !== expect.tokensEstimatedSaved) {
    problems.push(`tokensEstimatedSaved: expected ${expect.tokensEstimatedSaved}, got ${answer.tokensEstimatedSaved}`);
  }
  if (expect.summarizerCalls !== undefined && fake.calls !== expect.summarizerCalls)
    problems.push(`summarizerCalls: expected ${expect.summarizerCalls}, got ${fake.calls}`);
  const sent = fake.requests.map((r) => r.text).join('\n');
  for (const s of expect.summarizerInputIncludes ?? []) if (!sent.includes(s)) problems.push(`summarizer input lacks ${JSON.stringify(s)}`);
  for (const s of expect.summarizerInputExcludes ?? []) if (sent.includes(s)) problems.push(`summarizer input contains ${JSON.stringify(s)}`);

  // The window read back through the projection must be the kept list, and the decision recorded.
  const lastPosition = answer.position ?? append.body.position;
  const window = await http('GET', `/v1/sessions/${sessionId}/window?estimator=${vector.estimator}${lastPosition ? `&minPosition=${lastPosition}` : ''}`);
  if (window.status !== 200) problems.push(`window: HTTP ${window.status}`);
  else if (expect.kept)
    sameList(
      'window',
      (window.body.events as Array<{ id: string }>).map((e) => (e.id === summaryId ? '$summary' : e.id)),
      expect.kept,
      problems,
    );
  if (answer.outcome === 'compacted' || answer.outcome === 'failed') {
    const recorded = await http('GET', `/v1/sessions/${sessionId}/compactions/${answer.compactionId}`);
    if (recorded.status !== 200) problems.push(`compaction ${answer.compactionId} not readable: HTTP ${recorded.status}`);
  }
  return problems;
}

/** Options of {@link runConformance}. */
export interface RunOptions {
  /** Called with one line per vector as it completes. */
  onResult?: (result: VectorResult) => void;
  /**
   * Stops the run when aborted (the CLI aborts it on SIGINT/SIGTERM, with the signal's name as the
   * reason, see `stopOnSignals`): the vector under way is left, the service and the fake model
   * are closed, the temporary store is removed, and {@link runConformance} rejects with a
   * {@link RunInterrupted} saying how many vectors ran.
   */
  signal?: AbortSignal;
}

/**
 * Runs every vector of `dir` through a fresh in-process service on a temporary embedded store.
 * @returns one result per vector, in file-name order.
 * @throws RunInterrupted once `options.signal` aborts (after closing the service and removing its store).
 */
export async function runConformance(dir: string, options: RunOptions = {}): Promise<VectorResult[]> {
  const vectors = loadVectors(dir);
  const fake = new FakeOpenAiServer();
  await fake.start();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'conformance-'));
  let service: SessionService | undefined;
  const signal = options.signal;
  const results: VectorResult[] = [];
  const interruption = () => {
    const failed = results.filter((r) => r.problems.length > 0).length;
    return new RunInterrupted(
      signalName(signal),
      `after ${results.length} of ${vectors.length} vectors (${results.length - failed} passed, ${failed} failed); temporary store removed`,
    );
  };
  try {
    const env = { ...process.env, DATA_DIR: dataDir, PORT: '0', API_KEYS: undefined, RATE_LIMIT_PER_MINUTE: '0' };
    service = await createSessionService(loadServiceConfig(env), {
      quiet: true,
      env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'conformance', SUMMARIZER_MAX_RETRIES: '0', SUMMARIZER_TIMEOUT_MS: '10000' },
    });
    await service.app.listen(0, '127.0.0.1');
    if (signal?.aborted) throw interruption();
    const { port } = service.app.getHttpServer().address() as { port: number };
    const http = client(`http://127.0.0.1:${port}`, signal);
    for (const { file, vector, invalid } of vectors) {
      if (signal?.aborted) throw interruption();
      let problems: string[];
      if (!vector) problems = [`invalid vector file: ${invalid}`];
      else {
        try {
          problems = await checkVector(http, fake, vector, `conformance-${results.length + 1}`);
        } catch (err) {
          if (signal?.aborted) throw interruption();
          problems = [`error: ${(err as Error).message}`];
        }
      }
      const result = { id: vector?.id ?? file, file, problems };
      results.push(result);
      options.onResult?.(result);
    }
    return results;
  } finally {
    await service?.close();
    await fake.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
