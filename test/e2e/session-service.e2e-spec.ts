/**
 * End to end on the real app (supertest, embedded store in a temp dir), with real agent
 * conversations from the shared data: append OpenAI messages turn by turn, compact with each
 * strategy, read the window in both formats, find an archived phrase through recall, read the
 * compaction, time travel, then restart on the same directory and get the same answers.
 */
import * as fs from 'node:fs';
import type { Response } from 'superagent';
import { SessionReads, validateOpenAiWindow } from '@lib/session';
import { TAU_BENCH_FILE, describeWithShared } from '../support/shared-dir';
import { useService } from '../support/service-harness';

/** Keeps an answer's body as its text (superagent's parser callback). */
function rawText(res: Response, done: (err: Error | null, body: string) => void): void {
  let text = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => (text += chunk));
  res.on('end', () => done(null, text));
}

type Message = { role: string; content?: unknown; tool_calls?: unknown[]; [k: string]: unknown };

/** Splits a trajectory into turns: a user message and what follows it; the leading system message joins the first. */
function turns(traj: Message[]): Message[][] {
  const out: Message[][] = [];
  for (const m of traj) {
    if (m.role === 'user' || out.length === 0) out.push([m]);
    else out[out.length - 1].push(m);
  }
  if (out.length > 1 && out[0].every((m) => m.role === 'system')) out[1].unshift(...out.shift()!);
  return out;
}

const STRATEGIES: Array<Record<string, unknown>> = [
  { type: 'sliding-window', maxEvents: 8 },
  { type: 'turn-window', maxTurns: 2 },
  { type: 'token-count', maxTokens: 3000 },
  { type: 'recursive-summarization', maxEventsToKeep: 6, overlapSize: 2 },
  { type: 'rolling-summary', keepTurns: 2, summarizeAtTokens: 200 },
];

describeWithShared('session service end to end on real conversations', TAU_BENCH_FILE, () => {
  const sessions = (JSON.parse(fs.readFileSync(TAU_BENCH_FILE, 'utf8')) as Array<{ traj: Message[] }>).slice(0, STRATEGIES.length);
  const answers = new Map<string, { window: unknown; openai: unknown; compactions: unknown; recall: unknown }>();
  let lastPosition = '0';

  const harness = useService();

  it('appends each conversation turn by turn through the OpenAI endpoint', async () => {
    for (const [i, session] of sessions.entries()) {
      let revision = -1;
      for (const turn of turns(session.traj)) {
        const res = await harness
          .http()
          .post(`/v1/sessions/real-${i}/messages`)
          .send({ messages: turn, userId: `user-${i}` })
          .expect(201);
        expect(Number(res.body.revision)).toBe(revision + turn.length);
        revision = Number(res.body.revision);
        lastPosition = res.body.position;
      }
      const log = await harness.http().get(`/v1/sessions/real-${i}/window?minPosition=${lastPosition}`).expect(200);
      expect(log.body.events).toHaveLength(session.traj.length);
    }
  });

  it.each(STRATEGIES.map((s, i) => [s.type as string, i] as const))('compacts with %s and serves a valid window', async (_name, i) => {
    const sessionId = `real-${i}`;
    const before = await harness.http().get(`/v1/sessions/${sessionId}/window`).expect(200);
    const res = await harness.http().post(`/v1/sessions/${sessionId}/compactions`).send({ strategy: STRATEGIES[i] }).expect(200);
    expect(res.body.outcome).toBe('compacted');
    expect(res.body.archived.length).toBeGreaterThan(0);
    expect(res.body.tokensBefore).toBe(before.body.tokens);
    expect(res.body.tokensAfter).toBeLessThan(res.body.tokensBefore);
    lastPosition = res.body.position;

    const window = await harness.http().get(`/v1/sessions/${sessionId}/window?minPosition=${res.body.position}`).expect(200);
    expect(window.body.events.map((e: { id: string }) => e.id)).toEqual(res.body.kept);
    expect(window.body.tokens).toBe(res.body.tokensAfter);
    const archived = new Set(res.body.archived);
    expect(window.body.events.some((e: { id: string }) => archived.has(e.id))).toBe(false);

    const openai = await harness.http().get(`/v1/sessions/${sessionId}/window?format=openai`).expect(200);
    expect(openai.body.messages[0].role).toBe('system');
    expect(validateOpenAiWindow(openai.body.messages)).toEqual([]);

    const recorded = await harness.http().get(`/v1/sessions/${sessionId}/compactions/${res.body.compactionId}`).expect(200);
    expect(JSON.stringify(recorded.body)).toContain(res.body.compactionId);
    const history = await harness.http().get(`/v1/sessions/${sessionId}/compactions`).expect(200);
    expect(history.body.compactions).toHaveLength(1);

    // Running the same strategy again on the result archives nothing more.
    const again = await harness.http().post(`/v1/sessions/${sessionId}/compactions`).send({ strategy: STRATEGIES[i] }).expect(200);
    expect(again.body.archived.filter((id: string) => !id.startsWith('summary-'))).toEqual([]);
  });

  it('finds an archived phrase through recall and names the compaction that archived it', async () => {
    const sessionId = 'real-0';
    const log = await harness.http().get(`/v1/sessions/${sessionId}/events?limit=1000`).expect(200);
    const archivedUser = log.body.events.find((e: { kind?: string; archived?: boolean }) => e.kind === 'user' && e.archived);
    expect(archivedUser).toBeDefined();
    const words = String(archivedUser.data.event.text)
      .match(/[A-Za-z]{5,}/g)!
      .slice(0, 2)
      .join(' ');
    const res = await harness.http().get(`/v1/recall`).query({ q: words, sessionId, archived: 'true' }).expect(200);
    const hit = res.body.items.find((item: { eventId: string }) => item.eventId === archivedUser.eventId);
    expect(hit).toMatchObject({ sessionId, archived: true, compactionId: archivedUser.archivedBy });
    // Booleans in queries: any letter case (Python's requests sends True), or 1/0; the same filter each way.
    for (const archived of ['True', 'TRUE', '1'])
      expect((await harness.http().get(`/v1/recall`).query({ q: words, sessionId, archived }).expect(200)).body.items).toEqual(res.body.items);
    for (const archived of ['False', '0']) {
      const active = await harness.http().get(`/v1/recall`).query({ q: words, sessionId, archived }).expect(200);
      expect(active.body.items.map((item: { eventId: string }) => item.eventId)).not.toContain(archivedUser.eventId);
    }
  });

  it('serves the window at an earlier revision, computed from the log', async () => {
    const sessionId = 'real-0';
    const history = await harness.http().get(`/v1/sessions/${sessionId}/compactions`).expect(200);
    const basedOn = history.body.compactions[0].basedOnRevision ?? history.body.compactions[0].data?.basedOnRevision;
    const past = await harness.http().get(`/v1/sessions/${sessionId}/window?atRevision=${basedOn}`).expect(200);
    expect(past.body.revision).toBe(String(basedOn));
    expect(past.body.events).toHaveLength(sessions[0].traj.length);
    const now = await harness.http().get(`/v1/sessions/${sessionId}/window`).expect(200);
    expect(now.body.events.length).toBeLessThan(past.body.events.length);
  });

  it('answers the window and the log as JSON: the bytes of the parsed answers, spliced from the stored events', async () => {
    const reads = harness.service.app.get(SessionReads);
    for (let i = 0; i < sessions.length; i++) {
      const id = `real-${i}`;
      const window = await harness.http().get(`/v1/sessions/${id}/window?estimator=o200k_base`).buffer(true).parse(rawText).expect(200);
      expect(window.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(window.body).toBe(JSON.stringify(await reads.window('default', id, { format: 'events', estimator: 'o200k_base' })));
      const log = await harness.http().get(`/v1/sessions/${id}/events?limit=1000`).buffer(true).parse(rawText).expect(200);
      expect(log.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(log.body).toBe(JSON.stringify(await reads.log('default', id, 0n, 1000)));
    }
  });

  it('gives the same answers after a restart on the same directory', async () => {
    for (let i = 0; i < sessions.length; i++) {
      const id = `real-${i}`;
      answers.set(id, {
        window: (await harness.http().get(`/v1/sessions/${id}/window`).expect(200)).body,
        openai: (await harness.http().get(`/v1/sessions/${id}/window?format=openai`).expect(200)).body,
        compactions: (await harness.http().get(`/v1/sessions/${id}/compactions`).expect(200)).body,
        recall: (await harness.http().get(`/v1/recall`).query({ q: 'reservation', sessionId: id }).expect(200)).body,
      });
    }
    await harness.restart();
    for (const [id, expected] of answers) {
      expect((await harness.http().get(`/v1/sessions/${id}/window?minPosition=${lastPosition}`).expect(200)).body).toEqual(expected.window);
      expect((await harness.http().get(`/v1/sessions/${id}/window?format=openai`).expect(200)).body).toEqual(expected.openai);
      expect((await harness.http().get(`/v1/sessions/${id}/compactions`).expect(200)).body).toEqual(expected.compactions);
      expect((await harness.http().get(`/v1/recall`).query({ q: 'reservation', sessionId: id }).expect(200)).body).toEqual(expected.recall);
    }
  });
});
