/**
 * The audit routes through the typed client (issue 13): the session list (keyset pages under
 * concurrent writes, filters), one session's summary and policy, the paginated compaction
 * history with `minPosition` and its public item shape, the before/after diff of a compaction
 * against time travel, tenant isolation, 404s and bad cursors. Every answer is also parsed with
 * the zod schema the OpenAPI document declares for it. Runs in about 10 s.
 */
import type { SummaryRequest } from '@lib/compaction';
import type { Summarizer, SummarizerOutcome } from '@lib/session';
import type { Schemas, SessionServiceClient } from '@lib/client';
import {
  CompactionDiffSchema,
  CompactionHistoryItemSchema,
  CompactionHistoryPageSchema,
  ErrorBodySchema,
  SessionListSchema,
  SessionPolicySchema,
  SessionSummarySchema,
} from '../../apps/session-service/src/http/response-schemas';
import { startListeningService, type ClientHarness } from '../support/client-harness';

const KEY_A = 'audit-key-tenant-a';
const KEY_B = 'audit-key-tenant-b';

/** How long the failing summarizer takes to fail, ms (as a model timing out would, shorter). */
const FAILING_AFTER_MS = 120;

/** Summarizes, or fails after {@link FAILING_AFTER_MS} while `failing` is set. */
class SwitchableSummarizer implements Summarizer {
  readonly identity = { kind: 'extractive' as const, model: 'audit-test' };
  failing = false;
  async summarize(request: SummaryRequest): Promise<SummarizerOutcome> {
    if (this.failing) {
      await new Promise((resolve) => setTimeout(resolve, FAILING_AFTER_MS));
      return { ok: false, reason: 'model unavailable (test)', calls: 1, promptTokens: 7, completionTokens: 0 };
    }
    return { ok: true, text: `RECAP of ${request.coveredIds.length} events`, calls: 1, promptTokens: 11, completionTokens: 3 };
  }
}

describe('audit API', () => {
  let harness: ClientHarness;
  let a: SessionServiceClient;
  let b: SessionServiceClient;
  const summarizer = new SwitchableSummarizer();

  const append = async (client: SessionServiceClient, sessionId: string, texts: string[], userId?: string) => {
    const { data, error } = await client.POST('/v1/sessions/{sessionId}/events', {
      params: { path: { sessionId } },
      body: { events: texts.map((text, i) => ({ type: i % 2 === 0 ? ('user' as const) : ('assistant' as const), text })), ...(userId ? { userId } : {}) },
    });
    if (!data) throw new Error(`append failed: ${JSON.stringify(error)}`);
    return data;
  };
  const compact = async (sessionId: string, strategy: Schemas['StrategyInput']) => {
    const { data, error } = await a.POST('/v1/sessions/{sessionId}/compactions', { params: { path: { sessionId } }, body: { strategy } });
    if (!data) throw new Error(`compaction failed: ${JSON.stringify(error)}`);
    return data;
  };
  const listAll = async (query: { userId?: string; updatedSince?: string; updatedBefore?: string; limit?: string } = {}) => {
    const { data } = await a.GET('/v1/sessions', { params: { query } });
    return SessionListSchema.parse(data);
  };

  beforeAll(async () => {
    harness = await startListeningService({ env: { API_KEYS: `${KEY_A}:tenantA,${KEY_B}:tenantB` }, summarizer });
    a = harness.client(KEY_A);
    b = harness.client(KEY_B);
  });
  afterAll(() => harness?.stop());

  it('pages through the sessions newest activity first; concurrent writes never repeat a session, untouched ones appear once', async () => {
    for (let i = 0; i < 7; i++) await append(a, `list-${i}`, [`hello ${i}`, `hi ${i}`], i % 2 === 0 ? 'alice' : 'bob');
    await append(b, 'list-0', ['tenant b has its own list-0']);
    const last = await append(b, 'b-only', ['only in tenant b']);
    await a.GET('/v1/sessions/{sessionId}', { params: { path: { sessionId: 'list-0' }, query: { minPosition: last.position } } });

    const seen: Schemas['SessionSummary'][] = [];
    const touched = new Set<string>();
    let cursor: string | undefined;
    let pages = 0;
    do {
      const { data, error } = await a.GET('/v1/sessions', { params: { query: { limit: '2', ...(cursor ? { cursor } : {}) } } });
      expect(error).toBeUndefined();
      const page = SessionListSchema.parse(data);
      seen.push(...page.sessions);
      cursor = page.nextCursor;
      pages++;
      // Writes between pages: a new session, and more events in one already listed and one not yet listed.
      if (pages === 1) {
        await append(a, 'list-new', ['arrived while paging']);
        await append(a, page.sessions[0].sessionId, ['again']);
        await append(a, 'list-0', ['moved to the front']);
        touched.add('list-new').add(page.sessions[0].sessionId).add('list-0');
      }
    } while (cursor);

    const ids = seen.map((s) => s.sessionId);
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 0; i < 7; i++) if (!touched.has(`list-${i}`)) expect(ids.filter((id) => id === `list-${i}`)).toHaveLength(1);
    expect(ids).not.toContain('b-only');
    expect(pages).toBeGreaterThanOrEqual(3);
    const positions = seen.map((s) => BigInt(s.lastPosition));
    expect(positions).toEqual([...positions].sort((x, y) => (x > y ? -1 : x < y ? 1 : 0)));

    const now = await listAll();
    expect(now.sessions[0].sessionId).toBe('list-0');
    expect((await listAll({ userId: 'alice' })).sessions.map((s) => s.sessionId).sort()).toEqual(['list-0', 'list-2', 'list-4', 'list-6']);
    const since = now.sessions[1].lastActivityAt;
    expect((await listAll({ updatedSince: since })).sessions.every((s) => s.lastActivityAt >= since)).toBe(true);
    expect((await listAll({ updatedSince: '2999-01-01T00:00:00Z' })).sessions).toEqual([]);
    // Newcomer ncretention (A3): a clean-up job lists the sessions inactive since a time (exclusive), alone or with updatedSince.
    const before = (await listAll({ updatedBefore: since })).sessions;
    expect(before.length).toBeGreaterThan(0);
    expect(before.every((s) => s.lastActivityAt < since)).toBe(true);
    expect(before.length + (await listAll({ updatedSince: since })).sessions.length).toBe(now.sessions.length);
    expect((await listAll({ updatedBefore: '1999-01-01T00:00:00Z' })).sessions).toEqual([]);
    // An empty range is a mistake, refused as recall refuses one (newcomer ncrecall61 F1: it answered 200 with no sessions).
    const empty = await a.GET('/v1/sessions', { params: { query: { updatedSince: since, updatedBefore: since } } });
    expect({ status: empty.response.status, error: empty.error }).toEqual({
      status: 400,
      error: { code: 'validation_failed', parameter: 'updatedSince', message: 'updatedSince: must be earlier than updatedBefore' },
    });
    const oldest = before[before.length - 1].lastActivityAt;
    expect((await listAll({ updatedSince: oldest, updatedBefore: since, userId: 'alice' })).sessions.map((s) => s.sessionId)).toEqual(
      before.filter((s) => s.userId === 'alice').map((s) => s.sessionId),
    );
    const { data: bList } = await b.GET('/v1/sessions', {});
    expect(bList!.sessions.map((s) => s.sessionId).sort()).toEqual(['b-only', 'list-0']);
  });

  it('summarises one session: counts, window size as /window computes it, compactions and policy', async () => {
    await append(a, 'summary', ['one', 'two', 'three', 'four', 'five', 'six'], 'carol');
    const compaction = await compact('summary', { type: 'sliding-window', maxEvents: 2 });
    const { data } = await a.GET('/v1/sessions/{sessionId}', {
      params: { path: { sessionId: 'summary' }, query: { minPosition: compaction.position, estimator: 'chars' } },
    });
    const summary = SessionSummarySchema.parse(data);
    const { data: window } = await a.GET('/v1/sessions/{sessionId}/window', { params: { path: { sessionId: 'summary' }, query: { estimator: 'chars' } } });
    expect(summary).toMatchObject({
      sessionId: 'summary',
      userId: 'carol',
      eventCount: 6,
      windowEvents: 2,
      compactionCount: 1,
      failedCompactionCount: 0,
      policy: null,
      estimator: 'chars',
    });
    expect(summary.windowTokens).toBe(window!.tokens);
    expect(summary.revision).toBe(compaction.revision);
    expect(summary.lastPosition).toBe(compaction.position);

    const noPolicy = await a.GET('/v1/sessions/{sessionId}/policy', { params: { path: { sessionId: 'summary' } } });
    expect(SessionPolicySchema.parse(noPolicy.data)).toEqual({
      sessionId: 'summary',
      strategy: null,
      trigger: null,
      estimator: null,
      revision: compaction.revision,
      requestedBy: null,
    });
    const set = await a.PUT('/v1/sessions/{sessionId}/policy', {
      params: { path: { sessionId: 'summary' } },
      body: { strategy: { type: 'token-count', maxTokens: 500 }, trigger: { type: 'turn-count', maxTurns: 50 } },
    });
    const after = await append(a, 'summary', ['seven']);
    const policy = await a.GET('/v1/sessions/{sessionId}/policy', { params: { path: { sessionId: 'summary' }, query: { minPosition: after.position } } });
    expect(SessionPolicySchema.parse(policy.data)).toMatchObject({
      strategy: { type: 'token-count', maxTokens: 500 },
      trigger: { type: 'turn-count', maxTurns: 50 },
      estimator: 'cl100k_base',
    });
    // GET answers what PUT answered: the policy event in force (its revision, not the session's last).
    expect(policy.data).toEqual(set.data);
    // The typed client PUTs a GET answer back as it is: the same policy, nothing written.
    const back = await a.PUT('/v1/sessions/{sessionId}/policy', { params: { path: { sessionId: 'summary' } }, body: policy.data! });
    expect(back.data).toEqual(policy.data);
    const withPolicy = await a.GET('/v1/sessions/{sessionId}', { params: { path: { sessionId: 'summary' } } });
    expect(withPolicy.data!.policy?.strategy).toEqual({ type: 'token-count', maxTokens: 500 });
    const clear = await a.PUT('/v1/sessions/{sessionId}/policy', { params: { path: { sessionId: 'summary' } }, body: { strategy: null } });
    const cleared = await append(a, 'summary', ['eight']);
    const none = await a.GET('/v1/sessions/{sessionId}/policy', { params: { path: { sessionId: 'summary' }, query: { minPosition: cleared.position } } });
    expect(SessionPolicySchema.parse(none.data)).toMatchObject({ strategy: null, trigger: null, estimator: null });
    expect(none.data).toEqual(clear.data);
  });

  it('given a session whose policy counts in o200k_base, when it is summarised without an estimator, then windowTokens is in cl100k_base (the documented default, as every session of a list), and in o200k_base when asked', async () => {
    const sessionId = 'o200k-policy';
    await append(a, sessionId, ['Здравствуйте! Какая погода в Токио? 日本語のテキストを検索', 'Солнечно, 23 градуса. 晴れです。']);
    await a.PUT('/v1/sessions/{sessionId}/policy', {
      params: { path: { sessionId } },
      body: { strategy: { type: 'token-count', maxTokens: 500 }, trigger: { type: 'turn-count', maxTurns: 50 }, estimator: 'o200k_base' },
    });
    const after = await append(a, sessionId, ['Спасибо!']);
    const read = async (estimator?: 'o200k_base') => {
      const query = { minPosition: after.position, ...(estimator ? { estimator } : {}) };
      const summary = SessionSummarySchema.parse((await a.GET('/v1/sessions/{sessionId}', { params: { path: { sessionId }, query } })).data);
      const { data: window } = await a.GET('/v1/sessions/{sessionId}/window', { params: { path: { sessionId }, query } });
      return { summary, window: window! };
    };
    const byDefault = await read();
    expect(byDefault.summary.policy?.estimator).toBe('o200k_base');
    expect(byDefault.summary.estimator).toBe('cl100k_base');
    expect(byDefault.window.estimator).toBe('cl100k_base');
    expect(byDefault.summary.windowTokens).toBe(byDefault.window.tokens);
    const asked = await read('o200k_base');
    expect(asked.summary.estimator).toBe('o200k_base');
    expect(asked.summary.windowTokens).toBe(asked.window.tokens);
    expect(asked.summary.windowTokens).not.toBe(byDefault.summary.windowTokens);
  });

  it('pages the compaction history oldest first while compactions keep coming; minPosition shows a decision at once', async () => {
    const id = 'history';
    const decisions: string[] = [];
    for (let i = 0; i < 5; i++) {
      await append(a, id, [`question ${i}`, `answer ${i}`, `follow-up ${i}`, `reply ${i}`]);
      const answer = await compact(id, { type: 'sliding-window', maxEvents: 3 });
      expect(answer.outcome).toBe('compacted');
      decisions.push(answer.compactionId!);
      // Read-your-writes: the decision is in the history as soon as its position is reached.
      const { data } = await a.GET('/v1/sessions/{sessionId}/compactions/{compactionId}', {
        params: { path: { sessionId: id, compactionId: answer.compactionId! }, query: { minPosition: answer.position } },
      });
      expect(CompactionHistoryItemSchema.parse(data).compactionId).toBe(answer.compactionId);
    }
    const collected: Schemas['CompactionHistoryItem'][] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const { data, error } = await a.GET('/v1/sessions/{sessionId}/compactions', {
        params: { path: { sessionId: id }, query: { limit: '2', ...(cursor ? { cursor } : {}) } },
      });
      expect(error).toBeUndefined();
      const page = CompactionHistoryPageSchema.parse(data);
      collected.push(...page.compactions);
      cursor = page.nextCursor;
      if (++pages === 1) {
        await append(a, id, ['late one', 'late two', 'late three', 'late four']);
        decisions.push((await compact(id, { type: 'sliding-window', maxEvents: 3 })).compactionId!);
      }
    } while (cursor);
    // The last decision may or may not be projected when the last page is read; nothing repeats or is skipped before it.
    const ids = collected.map((c) => c.compactionId);
    expect(ids).toEqual(decisions.slice(0, ids.length));
    expect(ids.length).toBeGreaterThanOrEqual(5);
    const revisions = collected.map((c) => BigInt(c.revision));
    expect(revisions).toEqual([...revisions].sort((x, y) => (x < y ? -1 : 1)));

    const item = collected[0];
    expect(item).toMatchObject({
      outcome: 'compacted',
      origin: 'command',
      strategy: { type: 'sliding-window', maxEvents: 3 },
      trigger: null,
      estimator: 'cl100k_base',
      summary: null,
      failure: null,
    });
    expect(item.tokensSaved).toBe(item.tokensBefore - item.tokensAfter);
    expect(Object.keys(item)).not.toEqual(expect.arrayContaining(['paramsKey']));
    expect(JSON.stringify(collected)).not.toMatch(/paramsKey|checkpoint|keptIds/);
  });

  it('records summaries, summarizer usage and failures in the public shape', async () => {
    const id = 'summarized';
    await append(
      a,
      id,
      Array.from({ length: 10 }, (_, i) => `turn ${i} about the quarterly numbers`),
    );
    const ok = await compact(id, { type: 'recursive-summarization', maxEventsToKeep: 4, overlapSize: 1 });
    summarizer.failing = true;
    await append(
      a,
      id,
      Array.from({ length: 6 }, (_, i) => `later turn ${i}`),
    );
    const failed = await compact(id, { type: 'recursive-summarization', maxEventsToKeep: 4, overlapSize: 1 });
    summarizer.failing = false;
    expect(failed.outcome).toBe('failed');
    const { data } = await a.GET('/v1/sessions/{sessionId}/compactions', { params: { path: { sessionId: id }, query: { minPosition: failed.position } } });
    const [done, broken] = CompactionHistoryPageSchema.parse(data).compactions;
    expect(done).toMatchObject({
      compactionId: ok.compactionId,
      summary: { id: ok.summary!.id, text: 'RECAP of 6 events', coveredIds: ok.summary!.coveredIds },
      summarizer: { model: 'audit-test', calls: 1, usage: { promptTokens: 11, completionTokens: 3 } },
      failure: null,
    });
    expect(done.durationMs).toBeGreaterThanOrEqual(0);
    expect(broken).toMatchObject({
      compactionId: failed.compactionId,
      outcome: 'failed',
      failure: { stage: 'summarize', reason: expect.stringContaining('model unavailable') },
      tokensSaved: 0,
    });
    expect(broken.tokensAfter).toBe(broken.tokensBefore);
    // the time the pass ran until it failed: at least what the summarizer took to fail
    expect(broken.durationMs).toBeGreaterThanOrEqual(FAILING_AFTER_MS);
    expect(broken.durationMs).toBeLessThan(60_000);
  });

  it('diffs a compaction: the windows just before and just after it, as time travel reads them', async () => {
    const id = 'summarized';
    const { data: history } = await a.GET('/v1/sessions/{sessionId}/compactions', { params: { path: { sessionId: id } } });
    const item = history!.compactions[0];
    const { data } = await a.GET('/v1/sessions/{sessionId}/compactions/{compactionId}/diff', {
      params: { path: { sessionId: id, compactionId: item.compactionId } },
    });
    const diff = CompactionDiffSchema.parse(data);
    const windowAt = async (revision: string) => {
      const { data: w } = await a.GET('/v1/sessions/{sessionId}/window', { params: { path: { sessionId: id }, query: { atRevision: revision } } });
      return w as Schemas['Window'] & { events: Schemas['WindowEvent'][] };
    };
    const before = await windowAt(diff.before.revision);
    const after = await windowAt(diff.after.revision);
    expect(diff.before.events.map((e) => e.id)).toEqual(before.events.map((e) => e.id));
    expect(diff.after.events.map((e) => e.id)).toEqual(after.events.map((e) => e.id));
    expect(diff.before.tokens).toBe(before.tokens);
    expect(diff.after.tokens).toBe(after.tokens);
    expect(diff.after.revision).toBe(item.revision);
    expect(diff.archivedIds).toEqual(item.archivedIds);
    expect(diff.addedIds).toEqual([item.summary!.id]);
    expect(diff.after.events.find((e) => e.change === 'added')).toMatchObject({ type: 'summary', preview: 'RECAP of 6 events' });
    expect(diff.before.events.filter((e) => e.change === 'archived')[0].preview).toContain('turn 0 about the quarterly numbers');
  });

  it('takes recall filters as typed values: archived as a boolean (or its text), limit as a number', async () => {
    await append(a, 'typed-recall', ['the gate code is QX71 first', 'noted QX71', 'later QX71 again', 'still QX71']);
    const pass = await compact('typed-recall', { type: 'sliding-window', maxEvents: 2 });
    const recall = async (archived: boolean | 'true' | 'false') => {
      const { data, error } = await a.GET('/v1/recall', {
        params: { query: { q: 'QX71', sessionId: 'typed-recall', archived, limit: 10, minPosition: pass.position } },
      });
      expect(error).toBeUndefined();
      return data!.items.map((hit) => hit.archived);
    };
    expect(await recall(true)).toEqual([true, true]);
    expect(await recall('true')).toEqual([true, true]);
    expect(await recall(false)).toEqual([false, false]);
  });

  it("answers 404 for unknown sessions and compactions and for another tenant's", async () => {
    const { data: history } = await a.GET('/v1/sessions/{sessionId}/compactions', { params: { path: { sessionId: 'summarized' } } });
    const compactionId = history!.compactions[0].compactionId;
    const calls: Array<[string, () => Promise<{ error?: unknown; response: Response }>]> = [];
    for (const [client, sessionId] of [
      [a, 'never-seen'],
      [b, 'summarized'],
    ] as const) {
      const path = { sessionId };
      calls.push(
        [`${sessionId} summary`, () => client.GET('/v1/sessions/{sessionId}', { params: { path } })],
        [`${sessionId} policy`, () => client.GET('/v1/sessions/{sessionId}/policy', { params: { path } })],
        [`${sessionId} compactions`, () => client.GET('/v1/sessions/{sessionId}/compactions', { params: { path } })],
        [`${sessionId} compaction`, () => client.GET('/v1/sessions/{sessionId}/compactions/{compactionId}', { params: { path: { ...path, compactionId } } })],
        [`${sessionId} diff`, () => client.GET('/v1/sessions/{sessionId}/compactions/{compactionId}/diff', { params: { path: { ...path, compactionId } } })],
      );
    }
    for (const [name, call] of calls) {
      const { error, response } = await call();
      expect([name, response.status, ErrorBodySchema.parse(error).code]).toEqual([name, 404, 'session_not_found']);
    }
    for (const route of ['/v1/sessions/{sessionId}/compactions/{compactionId}', '/v1/sessions/{sessionId}/compactions/{compactionId}/diff'] as const) {
      const { error, response } = await a.GET(route, { params: { path: { sessionId: 'summarized', compactionId: 'no-such-compaction' } } });
      expect(response.status).toBe(404);
      expect(error).toMatchObject({ code: 'compaction_not_found' });
    }
  });

  it('refuses bad cursors, limits, times and positions with a 400 naming the parameter', async () => {
    const { data: sessions } = await a.GET('/v1/sessions', { params: { query: { limit: '1' } } });
    const sessionsCursor = sessions!.nextCursor!;
    const { data: compactions } = await a.GET('/v1/sessions/{sessionId}/compactions', { params: { path: { sessionId: 'history' }, query: { limit: '1' } } });
    const compactionsCursor = compactions!.nextCursor!;
    const path = { sessionId: 'history' };
    // A compaction-history cursor is its session's: another session's list refuses it, naming it.
    const other = await a.GET('/v1/sessions/{sessionId}/compactions', { params: { path: { sessionId: 'summarized' }, query: { cursor: compactionsCursor } } });
    expect([other.response.status, other.error]).toEqual([
      400,
      {
        code: 'invalid_query',
        parameter: 'cursor',
        message:
          'cursor: this cursor belongs to the compactions of session "history", not of this session; pass the nextCursor this session\'s list gave, or omit cursor for its first page',
      },
    ]);
    const cases: Array<[string, () => Promise<{ error?: unknown; response: Response }>]> = [
      ['cursor', () => a.GET('/v1/sessions', { params: { query: { cursor: 'not-a-cursor!' } } })],
      ['cursor', () => a.GET('/v1/sessions', { params: { query: { cursor: Buffer.from('{"v":1,"l":"sessions","k":"-1"}').toString('base64url') } } })],
      ['cursor', () => a.GET('/v1/sessions', { params: { query: { cursor: compactionsCursor } } })],
      ['cursor', () => a.GET('/v1/sessions/{sessionId}/compactions', { params: { path, query: { cursor: sessionsCursor } } })],
      ['cursor', () => a.GET('/v1/sessions/{sessionId}/compactions', { params: { path, query: { cursor: 'x'.repeat(300) } } })],
      ['cursor', () => a.GET('/v1/sessions/{sessionId}/compactions', { params: { path, query: { cursor: 'x'.repeat(2049) } } })],
      ['limit', () => a.GET('/v1/sessions', { params: { query: { limit: '0' } } })],
      ['limit', () => a.GET('/v1/sessions/{sessionId}/compactions', { params: { path, query: { limit: '101' } } })],
      ['updatedSince', () => a.GET('/v1/sessions', { params: { query: { updatedSince: 'yesterday' } } })],
      ['updatedBefore', () => a.GET('/v1/sessions', { params: { query: { updatedBefore: '2026-02-30T00:00:00Z' } } })],
      ['minPosition', () => a.GET('/v1/sessions/{sessionId}/compactions', { params: { path, query: { minPosition: '-1' } } })],
      ['minPosition', () => a.GET('/v1/sessions/{sessionId}/policy', { params: { path, query: { minPosition: '9999999999999999999' } } })],
      ['estimator', () => a.GET('/v1/sessions/{sessionId}', { params: { path, query: { estimator: 'words' as 'chars' } } })],
    ];
    for (const [parameter, call] of cases) {
      const { error, response } = await call();
      expect([parameter, response.status]).toEqual([parameter, 400]);
      expect(ErrorBodySchema.parse(error).parameter).toBe(parameter);
    }
    const unknown = await fetch(`${harness.baseUrl}/v1/sessions?sort=asc`, { headers: { authorization: `Bearer ${KEY_A}` } });
    expect(unknown.status).toBe(400);
  });
});
