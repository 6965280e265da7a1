import { getEventListeners } from 'node:events';
import {
  DEFAULT_SHADOW_PROMPT,
  DEFAULT_SUMMARIZER_SYSTEM_PROMPT,
  defaultSummaryReserve,
  formatEvent,
  getEstimator,
  runningSummaryLengthLimit,
  SUMMARIZER_SECTION,
  summaryLengthSection,
  type SessionEvent,
  type SummaryRequest,
} from '@lib/compaction';
import { FakeOpenAiServer, type FakeFault, type FakeOutcome } from '../../../../test/support/fake-openai-server';
import { OpenAiSummarizer, type OpenAiSummarizerOptions } from './openai-summarizer';
import { minimumSummarizerBound, summarizerFromEnv } from './summarizer-config';

const API_KEY = 'sk-test-DO-NOT-LEAK-1234567890';

/** One fault case of the failure-kind table: what the endpoint answers (or none: unreachable) and the call's settings. */
interface FakeBehaviourCase {
  fault?: FakeOutcome;
  unreachable?: boolean;
  maxRetries?: number;
  timeoutMs?: number;
  maxTextLength?: number;
}
const SYSTEM_PROMPT = 'You write recaps.';
const STORED_SYSTEM = 'STORED-SYSTEM-MESSAGE-TEXT';

function event(i: number): SessionEvent {
  if (i % 3 === 0) return { id: `e${i}`, type: 'user', text: `user message number ${i} about order ORD-${1000 + i}` };
  if (i % 3 === 1)
    return { id: `e${i}`, type: 'assistant', text: null, toolCalls: [{ id: `c${i}`, name: 'lookup_order', arguments: `{"order":"ORD-${1000 + i}"}` }] };
  return { id: `e${i}`, type: 'tool', responses: [{ toolCallId: `c${i - 1}`, name: 'lookup_order', data: `{"status":"shipped","order":"ORD-${999 + i}"}` }] };
}

function request(archived: number, overlap = 0, currentSummaries: string[] = []): SummaryRequest {
  const events = Array.from({ length: archived + overlap }, (_, i) => event(i));
  return {
    systemPrompt: SYSTEM_PROMPT,
    shadowPrompt: 'What happened so far?',
    currentSummaries,
    toSummarize: events.slice(0, archived).map(formatEvent),
    overlap: events.slice(archived).map(formatEvent),
    coveredIds: events.slice(0, archived).map((e) => e.id),
  };
}

describe('OpenAiSummarizer against the fake server', () => {
  let server: FakeOpenAiServer;
  let url: string;

  beforeEach(async () => {
    server = new FakeOpenAiServer({ defaultBehaviour: 'THE SUMMARY' });
    url = (await server.start()).url;
  });
  afterEach(async () => {
    await server.close();
  });

  const summarizer = (options: Partial<OpenAiSummarizerOptions> = {}) =>
    new OpenAiSummarizer({ baseURL: url, apiKey: API_KEY, model: 'test-model', maxRetries: 0, timeoutMs: 5000, ...options });

  it('sends the formatted events with the overlap marked and no stored system message, and returns the reply', async () => {
    const req = request(6, 2, ['PREVIOUS SUMMARY']);
    const outcome = await summarizer().summarize(req);
    expect(outcome).toEqual({
      ok: true,
      text: 'THE SUMMARY',
      calls: 1,
      promptTokens: expect.any(Number),
      completionTokens: expect.any(Number),
      retries: 0,
      unreportedUsageCalls: 0,
      answeredModels: ['test-model'],
    });
    expect(server.calls).toBe(1);
    const sent = server.requests[0];
    expect(sent.model).toBe('test-model');
    expect(sent.hadAuthorization).toBe(true);
    expect(sent.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(sent.messages[0].content).toBe(SYSTEM_PROMPT);
    const user = sent.messages[1].content as string;
    for (const line of req.toSummarize) expect(user).toContain(line);
    expect(user).toContain('PREVIOUS SUMMARY');
    // the overlap comes after the context marker, the archived part before it
    const marker = user.indexOf(SUMMARIZER_SECTION.context);
    expect(marker).toBeGreaterThan(0);
    for (const line of req.overlap) expect(user.indexOf(line)).toBeGreaterThan(marker);
    expect(user.indexOf(req.toSummarize[req.toSummarize.length - 1])).toBeLessThan(marker);
    expect(sent.text).not.toContain(STORED_SYSTEM);
    expect(sent.text).not.toMatch(/^System: /m);
  });

  it('sums the usage the endpoint reports', async () => {
    server.setDefault({ reply: 'S', usage: { prompt_tokens: 111, completion_tokens: 7 } });
    const outcome = await summarizer().summarize(request(3));
    expect(outcome).toMatchObject({ ok: true, calls: 1, promptTokens: 111, completionTokens: 7 });
  });

  it('records the model each reply names beside the one configured (ncsummarizer A1): distinct, first seen first, across chunks and retries', async () => {
    server.setDefault({ reply: 'THE SUMMARY', model: 'gpt-4o-2024-08-06' });
    const one = await summarizer({ model: 'gpt-4o' }).summarize(request(4, 0));
    expect(one).toMatchObject({ ok: true, calls: 1, answeredModels: ['gpt-4o-2024-08-06'] });
    expect(server.requests[0].model).toBe('gpt-4o');
    // a failed attempt names none; the replies of several chunks add their own, each once
    server.reset();
    server.enqueue({ fault: 'status500' }).setDefault((_request, i) => ({ reply: `R${i}`, model: i % 2 === 1 ? 'm-a' : 'm-b' }));
    const chunked = await summarizer({ maxInputTokens: 300, maxRetries: 1 }).summarize(request(30, 0));
    expect(chunked.ok).toBe(true);
    expect(server.calls).toBeGreaterThan(3);
    expect(chunked).toMatchObject({ retries: 1, unreportedUsageCalls: 1, answeredModels: ['m-a', 'm-b'] });
  });

  it.each([
    ['absent', null, []],
    ['a number', 42, []],
    ['an object', { name: 'gpt-4o' }, []],
    ['empty', '', []],
    ['blank', ' \t ', []],
    ['padded', '  gpt-4o-mini-2024-07-18 ', ['gpt-4o-mini-2024-07-18']],
    ['huge (5,000 characters)', 'm'.repeat(5000), ['m'.repeat(200) + '…']],
    ['with control characters and a lone surrogate', 'gpt\u0000-4o\n\ud800x', ['gpt\ufffd-4o\ufffd\ufffdx']],
  ])('records a reply whose model is %s as it names a model (none, or trimmed, cut and cleaned), the reply still used', async (_what, rawModel, expected) => {
    server.setDefault({ reply: 'THE SUMMARY', rawModel });
    const outcome = await summarizer().summarize(request(4, 0));
    expect(outcome).toMatchObject({ ok: true, text: 'THE SUMMARY', calls: 1, answeredModels: expected });
  });

  it('reads a reply of text parts as their texts joined, as some compatible proxies answer (newcomer ncmodel71 F5: invalid_reply)', async () => {
    server.setDefault({
      fault: 'text-parts',
      parts: [
        { type: 'text', text: 'recap ' },
        { type: 'text', text: 'in parts' },
      ],
    });
    expect(await summarizer().summarize(request(3))).toMatchObject({ ok: true, text: 'recap in parts' });
  });

  it('trims the reply', async () => {
    server.setDefault('\n  recap text \n');
    expect(await summarizer().summarize(request(3))).toMatchObject({ ok: true, text: 'recap text' });
  });

  it('chunks a long input oldest first, folding each reply into the next call; the newest archived event is in the last call', async () => {
    server.setDefault((req) => ({ reply: `RECAP-${req.index}`, usage: { prompt_tokens: 10, completion_tokens: 2 } }));
    const req = request(60, 2, ['OLD SUMMARY']);
    const outcome = await summarizer({ maxInputTokens: 1500, estimator: getEstimator('chars') }).summarize(req);
    const n = server.calls;
    expect(n).toBeGreaterThan(2);
    expect(outcome).toEqual({
      ok: true,
      text: `RECAP-${n - 1}`,
      calls: n,
      promptTokens: 10 * n,
      completionTokens: 2 * n,
      retries: 0,
      unreportedUsageCalls: 0,
      answeredModels: ['test-model'],
    });

    const users = server.requests.map((r) => r.messages.find((m) => m.role === 'user')!.content as string);
    // the old summary goes with the first call only; each later call carries the previous reply
    expect(users[0]).toContain('OLD SUMMARY');
    for (let k = 1; k < n; k++) {
      expect(users[k]).toContain(`RECAP-${k - 1}`);
      expect(users[k]).not.toContain('OLD SUMMARY');
    }
    // every archived event is sent exactly once, oldest first across calls
    const positions = req.toSummarize.map((line) => {
      const k = users.findIndex((u) => u.includes(line));
      expect(k).toBeGreaterThanOrEqual(0);
      expect(users.filter((u) => u.includes(line))).toHaveLength(1);
      return k;
    });
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(positions[0]).toBe(0);
    expect(positions[positions.length - 1]).toBe(n - 1);
    // the overlap is context for the last call only
    for (const line of req.overlap) {
      expect(users[n - 1]).toContain(line);
      for (let k = 0; k < n - 1; k++) expect(users[k]).not.toContain(line);
    }
    // every call fits the bound (system + user, in the estimator's unit)
    for (const r of server.requests) {
      const size = r.messages.reduce((s, m) => s + (m.content as string).length, 0);
      expect(size).toBeLessThanOrEqual(1500);
    }
  });

  it('keeps every call within the bound when the running summary is longer than the planned reserve', async () => {
    server.setDefault((req) => `${'R'.repeat(500)}-${req.index}`);
    const req = request(60);
    const outcome = await summarizer({ maxInputTokens: 1500, estimator: getEstimator('chars') }).summarize(req);
    expect(outcome.ok).toBe(true);
    const users = server.requests.map((r) => r.messages[1].content as string);
    for (const r of server.requests) expect(r.messages.reduce((s, m) => s + (m.content as string).length, 0)).toBeLessThanOrEqual(1500);
    for (let k = 1; k < users.length; k++) expect(users[k]).toContain(`${'R'.repeat(500)}-${k - 1}`);
    for (const line of req.toSummarize) expect(users.filter((u) => u.includes(line))).toHaveLength(1);
  });

  it('given one archived tool result far over the bound (SUMMARIZER_MAX_INPUT_TOKENS=700), when summarized, then every character of it is sent exactly once, in marked parts, each call within the bound', async () => {
    // the newcomer's finding: one call got "…Departure: 04:00 AM f [… 888 characters omitted …] - Arrival…"
    // replies that grow past the reserve (175), up to about half a call's room (always carried whole)
    server.setDefault((req) => `RECAP-${req.index} ${'r'.repeat(Math.min(req.index * 37, 200))}`);
    const flights = Array.from(
      { length: 40 },
      (_, i) => `- Flight HAT${100 + i}: Departure: 0${i % 10}:00 AM from JFK\n  Arrival: 1${i % 10}:30 AM at SEA`,
    ).join('\n');
    const tool: SessionEvent = { id: 't', type: 'tool', responses: [{ toolCallId: 'c', name: 'search_direct_flight', data: flights }] };
    const events: SessionEvent[] = [
      { id: 'u', type: 'user', text: 'find me a flight' },
      { id: 'c', type: 'assistant', text: null, toolCalls: [{ id: 'c', name: 'search_direct_flight', arguments: '{}' }] },
      tool,
      { id: 'a', type: 'assistant', text: 'HAT105 is the earliest' },
    ];
    const req: SummaryRequest = { ...request(0), toSummarize: events.map(formatEvent), coveredIds: events.map((e) => e.id) };
    const chars = getEstimator('chars');
    const outcome = await summarizer({ maxInputTokens: 700, estimator: chars }).summarize(req);
    expect(outcome.ok).toBe(true);
    const users = server.requests.map((r) => r.messages[1].content as string);
    for (const r of server.requests) expect(r.messages.reduce((s, m) => s + (m.content as string).length, 0)).toBeLessThanOrEqual(700);
    const sent = users.flatMap((u) =>
      u.slice(u.indexOf(SUMMARIZER_SECTION.toSummarize) + SUMMARIZER_SECTION.toSummarize.length + 1).split(/\n(?=\[part |User: |Assistant)/),
    );
    const parts = sent.filter((t) => t.startsWith('[part '));
    expect(parts.length).toBeGreaterThan(3);
    expect(parts.map((t) => t.replace(/^\[part [\d/, piece]+ of one event\] /, '')).join('')).toBe(formatEvent(tool));
    for (const t of sent) expect(t).not.toMatch(/omitted/);
    expect(users[users.length - 1]).toContain('Assistant: HAT105 is the earliest');
  });

  it('given a previous summary far over its share of a call (t17: 300 facts, SUMMARIZER_MAX_INPUT_TOKENS=700), when summarized, then every fact of it reaches exactly one call, oldest first, before the archived events, each call within the bound', async () => {
    // before: one call holding `fact0000 … fact0019 f [… 2339 characters omitted …] fact0280 …`
    server.setDefault((req) => `RECAP-${req.index}`);
    const facts = Array.from({ length: 300 }, (_, i) => `fact${String(i).padStart(4, '0')}`);
    const req = { ...request(6, 1, [facts.join(' ')]), systemPrompt: 'Merge the previous summary and the conversation; drop nothing.' };
    const cl100k = getEstimator('cl100k_base');
    const outcome = await summarizer({ maxInputTokens: 700, estimator: cl100k }).summarize(req);
    expect(outcome.ok).toBe(true);
    const n = server.calls;
    expect(n).toBeGreaterThan(2);
    const users = server.requests.map((r) => r.messages[1].content as string);
    for (const r of server.requests) expect(r.messages.reduce((sum, m) => sum + cl100k.count(m.content as string), 0)).toBeLessThanOrEqual(700);
    for (const u of users) expect(u).not.toMatch(/omitted/);
    const calls = facts.map((f) => {
      const at = users.flatMap((u, k) => (u.includes(f) ? [k] : []));
      expect(at).toHaveLength(1); // every fact reaches the model, once
      return at[0];
    });
    expect([...calls].sort((a, b) => a - b)).toEqual(calls);
    // each later call folds the previous reply in, before the next part of the previous summary
    for (let k = 1; k < n; k++) expect(users[k].indexOf(`RECAP-${k - 1}`)).toBeGreaterThan(users[k].indexOf(SUMMARIZER_SECTION.previousSummary));
    // the archived events come after the whole previous summary; the newest is in the last call
    const firstEvent = users.findIndex((u) => u.includes(req.toSummarize[0]));
    expect(firstEvent).toBeGreaterThanOrEqual(calls[calls.length - 1]);
    expect(users[n - 1]).toContain(req.toSummarize[req.toSummarize.length - 1]);
    expect(outcome).toMatchObject({ ok: true, text: `RECAP-${n - 1}`, calls: n });
  });

  it('fails the pass, cutting nothing, when a reply is too long to be carried whole into the next call', async () => {
    server.setDefault((req) => `${'R'.repeat(1200)}-${req.index}`);
    const outcome = await summarizer({ maxInputTokens: 1500, estimator: getEstimator('chars') }).summarize(request(60));
    expect(outcome).toMatchObject({
      ok: false,
      calls: 1,
      reason: expect.stringMatching(/^chunk 1: reply too long to carry into the next call whole \(1202 chars units, input bound 1500\)$/),
    });
    expect(server.calls).toBe(1);
  });

  describe("at most SUMMARIZER_MAX_CALLS_PER_PASS calls per pass (newcomer ncrace60 F3: no bound on a pass's spend)", () => {
    const chars = getEstimator('chars');

    it('given a pass whose chunks need more calls than the bound, then it fails call_limit before its first call; at the bound it completes', async () => {
      const needed = (await summarizer({ maxInputTokens: 700, estimator: chars }).summarize(request(60))).calls;
      expect(needed).toBeGreaterThan(3);
      server.reset();
      const refused = await summarizer({ maxInputTokens: 700, estimator: chars, maxCallsPerPass: needed - 1 }).summarize(request(60));
      expect(refused).toMatchObject({ ok: false, failureKind: 'call_limit', calls: 0, promptTokens: 0, completionTokens: 0 });
      expect(server.calls).toBe(0);
      expect(refused.ok === false && refused.reason).toBe(
        `the pass needs at least ${needed} model calls (its input in chunks of SUMMARIZER_MAX_INPUT_TOKENS=700), more than ` +
          `SUMMARIZER_MAX_CALLS_PER_PASS=${needed - 1} allows (no call made): raise SUMMARIZER_MAX_CALLS_PER_PASS, or archive less per pass (e.g. a commanded recursive-summarization pass with a larger maxEventsToKeep, repeated) and compact more often`,
      );
      const atBound = await summarizer({ maxInputTokens: 700, estimator: chars, maxCallsPerPass: needed }).summarize(request(60));
      expect(atBound).toMatchObject({ ok: true, calls: needed });
    });

    it("counts the calls of the pass's earlier attempts (callsSpent): planning again does not renew the bound", async () => {
      const needed = (await summarizer({ maxInputTokens: 700, estimator: chars }).summarize(request(60))).calls;
      server.reset();
      const bounded = summarizer({ maxInputTokens: 700, estimator: chars, maxCallsPerPass: needed });
      const refused = await bounded.summarize(request(60), { callsSpent: 1 });
      expect(refused).toMatchObject({ ok: false, failureKind: 'call_limit', calls: 0 });
      expect(refused.ok === false && refused.reason).toContain(`needs at least ${needed + 1} model calls`);
      expect(refused.ok === false && refused.reason).toContain('(stopped after 1 call)');
      expect(server.calls).toBe(0);
      expect(await bounded.summarize(request(60), { callsSpent: 0 })).toMatchObject({ ok: true, calls: needed });
    });

    it('given replies longer than planned that split the chunks left past the bound, then it stops before the call past it, with the calls made', async () => {
      // each reply takes 500 of a 1,500 call: the chunks after it are planned again, smaller, and more of them
      server.setDefault((req) => `${'R'.repeat(500)}-${req.index}`);
      const made = (await summarizer({ maxInputTokens: 1500, estimator: chars }).summarize(request(60))).calls;
      server.reset();
      server.setDefault((req) => `${'R'.repeat(500)}-${req.index}`);
      const outcome = await summarizer({ maxInputTokens: 1500, estimator: chars, maxCallsPerPass: made - 1 }).summarize(request(60));
      expect(outcome).toMatchObject({ ok: false, failureKind: 'call_limit' });
      // planned within the bound at first (calls were made), then stopped before the call past it
      expect(outcome.calls).toBeGreaterThan(0);
      expect(outcome.calls).toBeLessThanOrEqual(made - 1);
      expect(server.calls).toBe(outcome.calls);
      expect(outcome.ok === false && outcome.reason).toMatch(
        new RegExp(
          `^the pass needs at least \\d+ model calls .* more than SUMMARIZER_MAX_CALLS_PER_PASS=${made - 1} allows \\(stopped after ${outcome.calls} calls?\\)`,
        ),
      );
    });
  });

  it('stops at the first failed chunk and says which one', async () => {
    server.enqueue('RECAP-0', { fault: 'blank' });
    const outcome = await summarizer({ maxInputTokens: 700, estimator: getEstimator('chars') }).summarize(request(60));
    expect(outcome.ok).toBe(false);
    expect(server.calls).toBe(2);
    expect(outcome).toMatchObject({ calls: 2, reason: expect.stringMatching(/^chunk 2: blank reply/) });
  });

  it('fails the pass at the first chunk reply longer than maxTextLength, before it is carried into the next call; a reply of exactly that length goes on', async () => {
    server.setDefault((req) => `${'😀'.repeat(150)}${'R'.repeat(150)}-${req.index}`); // 302 code points, within the input bound's room
    const bounded = await summarizer({ maxInputTokens: 1500, estimator: getEstimator('chars') }).summarize(request(60), { maxTextLength: 301 });
    expect(bounded).toMatchObject({
      ok: false,
      calls: 1,
      reason: 'chunk 1: reply longer than the longest text an event may hold (302 characters, MAX_TEXT_LENGTH 301)',
    });
    expect(server.calls).toBe(1);

    server.reset();
    const atBound = await summarizer({ maxInputTokens: 1500, estimator: getEstimator('chars') }).summarize(request(60), { maxTextLength: 302 });
    expect(atBound.ok).toBe(true);
    expect(server.calls).toBeGreaterThan(1);
    expect(atBound).toMatchObject({ calls: server.calls, text: expect.stringMatching(/^(?:😀){150}R{150}-\d+$/) });
  });

  it("tells the model the summary budget (the session estimator's unit) at the end of every call, within the input bound", async () => {
    server.setDefault((req) => `RECAP-${req.index}`);
    const budgeted = { ...request(60, 2, ['OLD SUMMARY']), maxSummaryTokens: 300 };
    const chars = getEstimator('chars');
    const outcome = await summarizer({ maxInputTokens: 1500, estimator: chars }).summarize(budgeted, { estimator: chars });
    expect(outcome.ok).toBe(true);
    expect(server.calls).toBeGreaterThan(1);
    const textBudget = 300 - `User: ${budgeted.shadowPrompt}`.length - 'Assistant: '.length;
    for (const r of server.requests) {
      const user = r.messages[1].content as string;
      expect(user.endsWith(summaryLengthSection({ max: textBudget, unit: 'characters' }))).toBe(true);
      expect(r.messages.reduce((s, m) => s + (m.content as string).length, 0)).toBeLessThanOrEqual(1500);
    }
    // in tokens for a tokenizer session; nothing said without the session's estimator or a budget
    await summarizer().summarize(budgeted, { estimator: getEstimator('cl100k_base') });
    expect(server.requests[server.calls - 1].messages[1].content).toMatch(/## Length: write at most about \d+ tokens, and no more than the conversation above/);
    await summarizer().summarize(budgeted);
    await summarizer().summarize(request(3), { estimator: chars });
    for (const r of server.requests.slice(-2)) expect(r.messages[1].content).not.toContain('## Length');
    expect(server.requests.every((r) => !('max_tokens' in r.body) && !('max_completion_tokens' in r.body))).toBe(true);
  });

  // Newcomer ncllm: every call of a chunked pass was told the pass's budget ("at most about 47292
  // tokens" with a bound of 12,000), more than the next call can carry.
  it('asks each reply that the next call carries for at most the room that call keeps for it, and the last for the whole budget', async () => {
    server.setDefault((req) => `RECAP-${req.index}`);
    const budgeted = { ...request(60, 2, ['OLD SUMMARY']), maxSummaryTokens: 50_000 };
    const chars = getEstimator('chars');
    const outcome = await summarizer({ maxInputTokens: 1500, estimator: chars }).summarize(budgeted, { estimator: chars });
    expect(outcome.ok).toBe(true);
    expect(server.calls).toBeGreaterThan(2);
    const lengths = server.requests.map((r) => Number(/## Length: write at most about (\d+) characters/.exec(r.messages[1].content as string)?.[1]));
    const textBudget = 50_000 - `User: ${budgeted.shadowPrompt}`.length - 'Assistant: '.length;
    // every reply the next call carries is asked for the one room the plans keep for it: at most a quarter of the bound
    const asked = lengths[0];
    expect(asked).toBeGreaterThan(0);
    expect(asked).toBeLessThanOrEqual(defaultSummaryReserve(1500));
    expect(lengths).toEqual([...Array<number>(server.calls - 1).fill(asked), textBudget]);
    expect(runningSummaryLengthLimit({ max: 200, unit: 'tokens' }, 3000)).toEqual({ max: 200, unit: 'tokens' });
    expect(runningSummaryLengthLimit({ max: 47_292, unit: 'tokens' }, 3000)).toEqual({ max: 3000, unit: 'tokens' });
  });

  // Newcomer ncsumm62 F1: at the least bound the start-up accepted (514), the length instruction did not fit and was
  // dropped from every call, so the model was told no length; the least bound now counts it.
  it('tells the model the length on every call at the least bound the start-up accepts', async () => {
    const cl100k = getEstimator('cl100k_base');
    server.setDefault((req) => `RECAP-${req.index}`);
    const budgeted = { ...request(60, 2), systemPrompt: DEFAULT_SUMMARIZER_SYSTEM_PROMPT, shadowPrompt: DEFAULT_SHADOW_PROMPT, maxSummaryTokens: 50_000 };
    const least = minimumSummarizerBound();
    const outcome = await summarizer({ maxInputTokens: least, estimator: cl100k }).summarize(budgeted, { estimator: cl100k });
    expect(outcome).toMatchObject({ ok: true });
    expect(server.calls).toBeGreaterThan(2);
    for (const r of server.requests) {
      expect(r.messages[1].content).toMatch(/## Length: write at most about \d+ tokens/);
      expect(cl100k.count(r.messages[0].content as string) + cl100k.count(r.messages[1].content as string)).toBeLessThanOrEqual(least);
    }
  });

  // Newcomer ncsumm62 F1: with a long systemPrompt every chunk was asked for a quarter of the bound, more than the next
  // call keeps for the running summary, and a model writing 95 % of it failed the pass ("reply too long to carry").
  it.each([
    ['a 500-word systemPrompt, bound 1000', 'word '.repeat(500), 1000, 40],
    ['the default prompt, bound 1000', undefined, 1000, 120],
    ['a 2,000-word systemPrompt, bound 3000', 'word '.repeat(2000), 3000, 200],
  ])('a model that writes all it is asked never fails a chunked pass: %s', async (_case, systemPrompt, maxInputTokens, archived) => {
    const cl100k = getEstimator('cl100k_base');
    // each reply: as many one-token words as the call asked for
    server.setDefault((req) => {
      const asked = Number(/## Length: write at most about (\d+) tokens/.exec(req.messages[1].content as string)?.[1] ?? 50);
      return ' recap'.repeat(asked).trim();
    });
    const budgeted = { ...request(archived, 2), maxSummaryTokens: 50_000, ...(systemPrompt ? { systemPrompt } : {}) };
    const outcome = await summarizer({ maxInputTokens, estimator: cl100k }).summarize(budgeted, { estimator: cl100k });
    expect(server.calls).toBeGreaterThan(2);
    expect(outcome).toMatchObject({ ok: true });
    for (const r of server.requests)
      expect(cl100k.count(r.messages[0].content as string) + cl100k.count(r.messages[1].content as string)).toBeLessThanOrEqual(maxInputTokens);
  });

  it('turns a reply cut off at the output limit (finish_reason length) into ok:false, never a truncated summary', async () => {
    server.setDefault({ reply: 'A recap that stops in the mid', finishReason: 'length' });
    const outcome = await summarizer().summarize(request(3));
    expect(outcome).toMatchObject({ ok: false, calls: 1, reason: expect.stringMatching(/cut off .*finish_reason length/) });
  });

  const faults: Array<[string, FakeFault, RegExp]> = [
    ['HTTP 500', { fault: 'status500' }, /HTTP 500/],
    ['HTTP 429', { fault: 'status429', retryAfterSeconds: 0 }, /rate limited: HTTP 429/],
    ['a blank reply', { fault: 'blank' }, /blank reply: whitespace-only/],
    ['malformed JSON', { fault: 'malformed-json' }, /malformed JSON/],
    ['a refusal', { fault: 'refusal' }, /refused.*message\.refusal/],
    ['a content filter stop', { fault: 'content-filter' }, /refused.*content_filter/],
    ['no choices', { fault: 'no-choices' }, /no choices/],
  ];
  it.each(faults)('turns %s into ok:false with a reason that says so', async (_what, fault, reason) => {
    server.setDefault(fault);
    const outcome = await summarizer().summarize(request(3));
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.reason).toMatch(reason);
    expect(outcome.calls).toBe(1);
    expect(server.calls).toBe(1);
    expect(outcome.reason).not.toContain(API_KEY);
    expect(outcome.reason).not.toContain('ORD-');
    expect(outcome.reason).not.toContain('I cannot help');
  });

  it("names an endpoint's error code in the reason only when it is one of OpenAI's documented codes (an endpoint may echo input in it)", async () => {
    server.setDefault({ fault: 'status400', code: 'ctx_ORD-SECRET-42' });
    const echoed = await summarizer().summarize(request(3));
    expect(echoed).toMatchObject({ ok: false, reason: 'model endpoint rejected the request: HTTP 400' });
    server.setDefault({ fault: 'status400', code: 'context_length_exceeded' });
    const known = await summarizer().summarize(request(3));
    expect(known).toMatchObject({ ok: false, reason: 'model endpoint rejected the request: HTTP 400 (context_length_exceeded)' });
  });

  it('names the settings to check when the endpoint has no such model or route (404, or the code model_not_found)', async () => {
    server.setDefault({ fault: 'status404' });
    expect(await summarizer().summarize(request(3))).toMatchObject({
      ok: false,
      reason: 'model endpoint rejected the request: HTTP 404 (model_not_found); check SUMMARIZER_MODEL and OPENAI_BASE_URL',
    });
    server.setDefault({ fault: 'status400', code: 'model_not_found' });
    expect(await summarizer().summarize(request(3))).toMatchObject({
      ok: false,
      reason: 'model endpoint rejected the request: HTTP 400 (model_not_found); check SUMMARIZER_MODEL and OPENAI_BASE_URL',
    });
  });

  // Newcomer auditfix 2: `…/v1?api-version=…` (Azure) sent every call to `/v1?api-version=…%2Fchat%2Fcompletions` (404).
  it('sends the query of OPENAI_BASE_URL after the route, on every call', async () => {
    server.enqueue({ fault: 'status429', retryAfterSeconds: 0 });
    const s = summarizerFromEnv({ OPENAI_BASE_URL: `${url}?api-version=2024-10-21&x=a%2Fb`, OPENAI_API_KEY: API_KEY, SUMMARIZER_MAX_RETRIES: '1' });
    expect(await s.summarize(request(3))).toMatchObject({ ok: true, text: 'THE SUMMARY', calls: 2, retries: 1 });
    expect(server.requests.map((r) => r.target)).toEqual([
      '/v1/chat/completions?api-version=2024-10-21&x=a%2Fb',
      '/v1/chat/completions?api-version=2024-10-21&x=a%2Fb',
    ]);
  });

  it('turns a blank (empty) reply into ok:false', async () => {
    server.setDefault({ fault: 'blank', text: '' });
    expect(await summarizer().summarize(request(3))).toMatchObject({ ok: false, reason: expect.stringMatching(/blank reply/) });
  });

  it('retries a 429 with Retry-After under the client policy, then succeeds', async () => {
    server.enqueue({ fault: 'status429', retryAfterSeconds: 0 }, { fault: 'status429', retryAfterSeconds: 0 }).setDefault('AFTER RETRIES');
    const s = summarizerFromEnv({ OPENAI_BASE_URL: url, OPENAI_API_KEY: API_KEY, SUMMARIZER_MAX_RETRIES: '2', SUMMARIZER_MODEL: 'm' });
    const outcome = await s.summarize(request(3));
    // every request that reached the endpoint is a call; the two refused ones reported no usage
    expect(outcome).toMatchObject({ ok: true, text: 'AFTER RETRIES', calls: 3, retries: 2, unreportedUsageCalls: 2 });
    expect(server.requests.map((r) => r.answeredWith)).toEqual(['status429', 'status429', 'reply']);
  });

  it('gives up on 429 after the configured retries', async () => {
    server.setDefault({ fault: 'status429', retryAfterSeconds: 0 });
    const s = summarizerFromEnv({ OPENAI_BASE_URL: url, OPENAI_API_KEY: API_KEY, SUMMARIZER_MAX_RETRIES: '1' });
    const outcome = await s.summarize(request(3));
    expect(outcome).toMatchObject({ ok: false, reason: expect.stringMatching(/rate limited: HTTP 429 .*after 1 retry$/) });
    expect(server.calls).toBe(2);
  });

  // Newcomer ncllmfaults F1, F2: the openai client waited out any Retry-After (3600 s held a pass an hour per retry), and no abort ended that wait.
  it('fails at once, no retry made, on a Retry-After longer than 60 s and the per-attempt timeout, naming the wait', async () => {
    server.setDefault({ fault: 'status429', retryAfterSeconds: 3600 });
    const started = Date.now();
    const outcome = await summarizer({ maxRetries: 2, timeoutMs: 5000 }).summarize(request(3));
    expect(outcome).toMatchObject({
      ok: false,
      reason:
        'rate limited: HTTP 429 (rate_limit_exceeded); the endpoint asked to wait 3600 s before a retry (Retry-After), longer than the service waits (60 s, the larger of 60 s and SUMMARIZER_TIMEOUT_MS): not retried',
      calls: 1,
      retries: 0,
    });
    expect(server.calls).toBe(1);
    expect(Date.now() - started).toBeLessThan(4000);
  });

  // Newcomer ncstrat73 F1: a wait asked in retry-after-ms was said to come from Retry-After.
  it('names retry-after-ms when that header asked for the wait (and not the Retry-After sent with it)', async () => {
    server.setDefault({ fault: 'status429', retryAfterSeconds: 1, retryAfterMs: 3_600_000 });
    const outcome = await summarizer({ maxRetries: 2, timeoutMs: 5000 }).summarize(request(3));
    expect(outcome).toMatchObject({
      ok: false,
      reason:
        'rate limited: HTTP 429 (rate_limit_exceeded); the endpoint asked to wait 3600 s before a retry (retry-after-ms), longer than the service waits (60 s, the larger of 60 s and SUMMARIZER_TIMEOUT_MS): not retried',
      calls: 1,
    });
  });

  it('ends the wait before a retry when the call is aborted', async () => {
    server.setDefault({ fault: 'status429', retryAfterSeconds: 4 });
    const controller = new AbortController();
    const pending = summarizer({ maxRetries: 2, timeoutMs: 5000 }).summarize(request(3), { signal: controller.signal });
    while (server.calls === 0) await new Promise((r) => setTimeout(r, 5));
    const abortedAt = Date.now();
    controller.abort();
    expect(await pending).toMatchObject({ ok: false, reason: 'aborted', calls: 1 });
    expect(Date.now() - abortedAt).toBeLessThan(2000);
    expect(server.calls).toBe(1);
  });

  // Newcomer ncllmfaults F5: with the endpoint answering 429, each call and session backed off on its own (20 sessions: 180 calls in 10.9 s).
  describe('a 429 pauses every call of the summarizer until the wait it asked for is over', () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    /** Resolves once `s` has received the first 429 (its pause started), or its pause is already over (the first call's retry arrived). */
    async function pauseStarted(s: OpenAiSummarizer, arrivals: number[]): Promise<void> {
      while (arrivals.length === 0) await sleep(2);
      while (s.pauseRemainingMs() === 0 && arrivals.length < 2) await sleep(2);
    }

    it.each<[string, FakeFault, number]>([
      ['Retry-After: 1', { fault: 'status429', retryAfterSeconds: 1 }, 1000],
      ['retry-after-ms: 1000', { fault: 'status429', retryAfterSeconds: null, retryAfterMs: 1000 }, 1000],
      // no wait asked for: the backoff of the call answered 429 (0.5 s less up to 25% jitter)
      ['no header', { fault: 'status429', retryAfterSeconds: null }, 375],
    ])('%s: 5 calls started during the pause send no attempt before it ends, then all succeed', async (_what, fault, pauseMs) => {
      const arrivals: number[] = [];
      server.setDefault((_request, i) => {
        arrivals.push(Date.now());
        return i === 0 ? fault : 'AFTER THE PAUSE';
      });
      const s = summarizer({ maxRetries: 2 });
      const first = s.summarize(request(3));
      await pauseStarted(s, arrivals);
      const others = await Promise.all(Array.from({ length: 5 }, () => s.summarize(request(3))));
      expect(await first).toMatchObject({ ok: true, text: 'AFTER THE PAUSE', calls: 2, retries: 1 });
      for (const outcome of others) expect(outcome).toMatchObject({ ok: true, text: 'AFTER THE PAUSE', calls: 1, retries: 0 });
      expect(server.calls).toBe(7);
      // the 429 was answered after request 0 arrived, and the pause counts from when it was received: nothing arrived before its end
      for (const at of arrivals.slice(1)) expect(at - arrivals[0]).toBeGreaterThanOrEqual(pauseMs);
    });

    it('fails a call at once, no call made (calls: 0), while the pause has more left than a call waits', async () => {
      server.enqueue({ fault: 'status429', retryAfterSeconds: 3600 });
      const s = summarizer({ maxRetries: 2 });
      expect(await s.summarize(request(3))).toMatchObject({ ok: false, reason: expect.stringMatching(/asked to wait 3600 s before a retry/), calls: 1 });
      const paused = await s.summarize(request(3));
      expect(paused).toMatchObject({ ok: false, calls: 0, retries: 0, unreportedUsageCalls: 0 });
      if (paused.ok) return;
      const until = /until (\S+), /.exec(paused.reason)?.[1] ?? '';
      expect(paused.reason).toBe(
        `rate limited: every call to the model endpoint is paused after its HTTP 429 until ${until}, longer than the service waits (60 s, the larger of 60 s and SUMMARIZER_TIMEOUT_MS): no call made`,
      );
      // the pause's end, an hour from its 429, to the second
      expect(Math.abs(Date.parse(until) - (Date.now() + 3_600_000))).toBeLessThan(5_000);
      expect(until).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      // a later call the same pause refuses gives the same reason (one group in a failure storm's count: newcomer ncsumm62 F2)
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const again = await s.summarize(request(3));
      expect(again.ok ? null : again.reason).toBe(paused.reason);
      expect(server.calls).toBe(1);
      expect(s.pauseRemainingMs()).toBeGreaterThan(3_590_000);
    });

    it("does not retry a call when another call's 429 paused the endpoint for longer than it waits", async () => {
      // two calls in flight at once, both answered 429 once both arrived: the first asking for 1 s, the second for an hour
      let bothArrived!: () => void;
      const arrived = new Promise<void>((resolve) => (bothArrived = resolve));
      server.setDefault(async (_request, i) => {
        if (i === 1) bothArrived();
        await arrived;
        return { fault: 'status429', retryAfterSeconds: i === 0 ? 1 : 3600 };
      });
      const s = summarizer({ maxRetries: 2 });
      const first = s.summarize(request(3));
      while (server.calls === 0) await sleep(2);
      expect(await s.summarize(request(3))).toMatchObject({ ok: false, reason: expect.stringMatching(/asked to wait 3600 s before a retry/), calls: 1 });
      expect(await first).toMatchObject({
        ok: false,
        reason: expect.stringMatching(
          /^rate limited: every call to the model endpoint is paused after its HTTP 429 until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ, .*: not retried$/,
        ),
        calls: 1,
        retries: 0,
      });
      expect(server.calls).toBe(2);
    });

    it("ends a call's wait for the pause when the call is aborted, no call made", async () => {
      server.enqueue({ fault: 'status429', retryAfterSeconds: 30 });
      const s = summarizer({ maxRetries: 0 });
      expect(await s.summarize(request(3))).toMatchObject({ ok: false, reason: expect.stringMatching(/^rate limited: HTTP 429/), calls: 1 });
      const controller = new AbortController();
      const pending = s.summarize(request(3), { signal: controller.signal });
      setTimeout(() => controller.abort(), 50);
      expect(await pending).toMatchObject({ ok: false, reason: 'aborted', calls: 0 });
      // the abort ended the wait, not the end of the pause
      expect(s.pauseRemainingMs()).toBeGreaterThan(0);
      expect(server.calls).toBe(1);
    });
  });

  it('retries a 500 once and succeeds', async () => {
    server.enqueue({ fault: 'status500' }).setDefault('OK AFTER 500');
    const outcome = await summarizer({ maxRetries: 1 }).summarize(request(3));
    expect(outcome).toMatchObject({ ok: true, text: 'OK AFTER 500' });
    expect(server.calls).toBe(2);
  });

  it('turns a timeout into ok:false naming the timeout', async () => {
    server.setDefault({ fault: 'timeout' });
    const outcome = await summarizer({ timeoutMs: 200, maxRetries: 0 }).summarize(request(3));
    expect(outcome).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^timed out after 200 ms per attempt \(.*\); SUMMARIZER_TIMEOUT_MS sets the wait$/),
      calls: 1,
    });
    expect(server.calls).toBe(1);
  });

  it('retries a timeout under the client policy', async () => {
    server.enqueue({ fault: 'timeout' }).setDefault('LATE BUT OK');
    const outcome = await summarizer({ timeoutMs: 200, maxRetries: 1 }).summarize(request(3));
    expect(outcome).toMatchObject({ ok: true, text: 'LATE BUT OK' });
    expect(server.calls).toBe(2);
  });

  it('turns an abort into ok:false', async () => {
    server.setDefault({ fault: 'timeout' });
    const controller = new AbortController();
    const pending = summarizer({ timeoutMs: 5000 }).summarize(request(3), { signal: controller.signal });
    while (server.calls === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    expect(await pending).toMatchObject({ ok: false, reason: 'aborted' });
  });

  it("leaves no abort listener on the caller's signal after its calls (a long-lived signal shared by every call: no leak, no MaxListenersExceededWarning)", async () => {
    const shared = new AbortController().signal;
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on('warning', onWarning);
    try {
      const s = summarizer();
      // 12 calls one after the other, then 12 at once: more than the 10 listeners Node warns at
      for (let i = 0; i < 12; i++) expect(await s.summarize(request(3), { signal: shared })).toMatchObject({ ok: true });
      const together = await Promise.all(Array.from({ length: 12 }, () => s.summarize(request(3), { signal: shared })));
      for (const outcome of together) expect(outcome).toMatchObject({ ok: true });
      expect(getEventListeners(shared, 'abort')).toHaveLength(0);
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('sends no call given a signal already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    expect(await summarizer().summarize(request(3), { signal: controller.signal })).toMatchObject({ ok: false, reason: 'aborted' });
    expect(server.calls).toBe(0);
  });

  it('reports a rejected key without the key', async () => {
    await server.close();
    server = new FakeOpenAiServer({ requireApiKey: 'the-right-key' });
    url = (await server.start()).url;
    const outcome = await summarizer().summarize(request(3));
    expect(outcome).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/rejected the credentials: HTTP 401 \(invalid_api_key\); check OPENAI_API_KEY$/),
    });
    if (!outcome.ok) expect(outcome.reason).not.toContain(API_KEY);
  });

  it.each([301, 302, 303, 307, 308])(
    'does not follow a redirect (HTTP %i) to another host: the conversation reaches only the configured endpoint, and the failure says why (newcomer ncsec62 F1)',
    async (status) => {
      const elsewhere = new FakeOpenAiServer({ defaultBehaviour: 'ANOTHER HOST' });
      const other = await elsewhere.start();
      try {
        server.enqueue({ fault: 'redirect', status, location: `${other.url}/chat/completions` });
        const outcome = await summarizer().summarize(request(3));
        expect(elsewhere.requests).toHaveLength(0);
        expect(server.requests).toHaveLength(1);
        expect(outcome).toMatchObject({
          ok: false,
          failureKind: 'request_rejected',
          reason: `the model endpoint answered a redirect: HTTP ${status}; redirects are not followed (conversation text goes only to OPENAI_BASE_URL): set OPENAI_BASE_URL to the endpoint itself`,
        });
      } finally {
        await elsewhere.close();
      }
    },
  );

  it('reports an unreachable endpoint', async () => {
    await server.close();
    const outcome = await summarizer().summarize(request(3));
    expect(outcome).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^could not reach the model endpoint \(connection error, .*\); check OPENAI_BASE_URL and that the endpoint is up$/),
    });
    // The connection was refused: the request never reached a model, so no model call is counted.
    expect(outcome).toMatchObject({ calls: 0, promptTokens: 0, completionTokens: 0 });
  });

  // Newcomer ncoperator F7: the reason said `(connection error, 2 retries)` beside `calls: 0, retries: 0`, and nothing reconciled them.
  it('names the retries made against an unreachable endpoint, and that none of them is counted', async () => {
    await server.close();
    const fetched = jest.spyOn(globalThis, 'fetch');
    try {
      const outcome = await summarizer({ maxRetries: 2 }).summarize(request(3));
      expect(fetched).toHaveBeenCalledTimes(3);
      expect(outcome).toMatchObject({
        ok: false,
        reason:
          'could not reach the model endpoint (connection error, 2 retries; no attempt connected, so none is counted in calls or retries); check OPENAI_BASE_URL and that the endpoint is up',
        calls: 0,
        retries: 0,
      });
    } finally {
      fetched.mockRestore();
    }
  });

  // Newcomer auditfix 3: a reset after the request was sent said "could not reach the model endpoint", the words of calls: 0, with calls: 3.
  it('says a connection that failed after the request was sent did so, and counts its attempts', async () => {
    server.setDefault({ fault: 'reset' });
    const outcome = await summarizer({ maxRetries: 2 }).summarize(request(3));
    expect(outcome).toMatchObject({
      ok: false,
      reason: 'the connection to the model endpoint failed after the request was sent (connection error, 2 retries)',
      calls: 3,
      retries: 2,
    });
    expect(server.calls).toBe(3);
  });

  it('says so when the last attempt could not connect but an earlier one reached the endpoint', async () => {
    // the first attempt is reset, and the server is gone for the retry (refused)
    server.setDefault(() => {
      void server.close();
      return { fault: 'reset' };
    });
    const outcome = await summarizer({ maxRetries: 1 }).summarize(request(3));
    expect(outcome).toMatchObject({
      ok: false,
      reason: 'the last attempt could not connect to the model endpoint (1 attempt before it reached it; connection error, 1 retry)',
      calls: 1,
      retries: 0,
    });
  });

  // A failed pass carries a machine-readable kind beside its reason, chosen with it (COMPACTION_FAILURE_KINDS).
  describe('names the kind of every fault beside its reason (failureKind)', () => {
    const cases: Array<[string, FakeBehaviourCase, RegExp, string]> = [
      ['HTTP 401 (a wrong key)', { fault: { fault: 'status401' } }, /rejected the credentials: HTTP 401/, 'credentials'],
      ['HTTP 404 (no such model or route)', { fault: { fault: 'status404' } }, /HTTP 404 .*check SUMMARIZER_MODEL/, 'model_not_found'],
      ['HTTP 400 with the code model_not_found', { fault: { fault: 'status400', code: 'model_not_found' } }, /HTTP 400 \(model_not_found\)/, 'model_not_found'],
      ['HTTP 400 (another 4xx)', { fault: { fault: 'status400', code: 'context_length_exceeded' } }, /rejected the request: HTTP 400/, 'request_rejected'],
      ['HTTP 429 after the retries', { fault: { fault: 'status429', retryAfterSeconds: 0 } }, /^rate limited: HTTP 429/, 'rate_limited'],
      ['HTTP 429 asking to wait an hour', { fault: { fault: 'status429', retryAfterSeconds: 3600 }, maxRetries: 1 }, /asked to wait 3600 s/, 'rate_limited'],
      ['HTTP 500 after the retries', { fault: { fault: 'status500' } }, /^model endpoint error: HTTP 500/, 'endpoint_error'],
      ['a timeout', { fault: { fault: 'timeout' }, timeoutMs: 200 }, /^timed out after 200 ms/, 'timeout'],
      ['an unreachable endpoint', { unreachable: true }, /^could not reach the model endpoint/, 'unreachable'],
      ['a connection reset after the request was sent', { fault: { fault: 'reset' } }, /failed after the request was sent/, 'connection_lost'],
      ['a connection lost while the answer arrived', { fault: { fault: 'reset-mid-answer' } }, /lost while its answer arrived/, 'connection_lost'],
      ['a blank reply', { fault: { fault: 'blank' } }, /^blank reply/, 'invalid_reply'],
      ['an empty reply', { fault: { fault: 'blank', text: '' } }, /^blank reply: empty/, 'invalid_reply'],
      [
        'a reply of zero-width characters only',
        { fault: { fault: 'blank', text: '\u200b\u2060 \u3164' } },
        /^blank reply: only characters that render as nothing/,
        'invalid_reply',
      ],
      ['malformed JSON', { fault: { fault: 'malformed-json' } }, /^malformed JSON in the model reply$/, 'invalid_reply'],
      // newcomer ncmodel71 F3: both said "not a JSON object"
      [
        'a JSON reply sent as text/plain',
        { fault: { fault: 'text-content-type' } },
        /^malformed reply: its Content-Type is not application\/json/,
        'invalid_reply',
      ],
      [
        'a part that is not text among text parts',
        { fault: { fault: 'text-parts', parts: [{ type: 'text', text: 'A' }, { type: 'image_url' }] } },
        /^malformed reply: message content is an array with a part that is not text$/,
        'invalid_reply',
      ],
      ['a streamed reply', { fault: { fault: 'streamed' } }, /^malformed reply: a streamed reply \(server-sent "data:" lines\)/, 'invalid_reply'],
      ['a reply without choices', { fault: { fault: 'no-choices' } }, /no choices/, 'invalid_reply'],
      ['a reply cut off at the output limit', { fault: { reply: 'A recap cut', finishReason: 'length' } }, /finish_reason length/, 'invalid_reply'],
      ['a reply longer than maxTextLength', { fault: 'x'.repeat(50), maxTextLength: 10 }, /^reply longer than/, 'invalid_reply'],
      ['a refusal', { fault: { fault: 'refusal' } }, /message\.refusal/, 'refused'],
      ['a content filter stop', { fault: { fault: 'content-filter' } }, /content_filter/, 'refused'],
    ];
    it.each(cases)('%s', async (_what, c, reason, kind) => {
      if (c.unreachable) await server.close();
      else server.setDefault(c.fault!);
      const outcome = await summarizer({ maxRetries: c.maxRetries ?? 0, timeoutMs: c.timeoutMs ?? 5000 }).summarize(
        request(3),
        c.maxTextLength ? { maxTextLength: c.maxTextLength } : {},
      );
      expect(outcome).toMatchObject({ ok: false, reason: expect.stringMatching(reason), failureKind: kind });
    });

    it("an abort, and a call the endpoint's pause stops (no call made)", async () => {
      const controller = new AbortController();
      controller.abort();
      expect(await summarizer().summarize(request(3), { signal: controller.signal })).toMatchObject({ ok: false, reason: 'aborted', failureKind: 'aborted' });
      server.setDefault({ fault: 'status429', retryAfterSeconds: 3600 });
      const s = summarizer();
      expect(await s.summarize(request(3))).toMatchObject({ ok: false, failureKind: 'rate_limited' });
      expect(await s.summarize(request(3))).toMatchObject({
        ok: false,
        reason: expect.stringMatching(/paused .* no call made$/),
        failureKind: 'rate_limited',
        calls: 0,
      });
    });
  });

  it('works without a key for a local endpoint', async () => {
    const outcome = await new OpenAiSummarizer({ baseURL: url, maxRetries: 0 }).summarize(request(3));
    expect(outcome).toMatchObject({ ok: true, text: 'THE SUMMARY' });
  });
});
