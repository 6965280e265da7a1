/**
 * A compaction racing with appends (issue 4, acceptance 3), identical compactions at once sharing
 * one pass, and read models rebuilt from an empty database equal the incremental ones (acceptance 4).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { COMPACTION_COMPLETED, COMPACTION_FAILED, ReadModelStore, SessionProjector, SessionStateCache, dumpReadModels } from '@lib/session';
import { ControlledSummarizer, useService } from '../support/service-harness';

function conversation(prefix: string, turns: number) {
  const events = [];
  for (let t = 0; t < turns; t++) {
    events.push({ id: `${prefix}u${t}`, type: 'user', text: `question ${t} about booking ${prefix}${t}` });
    events.push({ id: `${prefix}c${t}`, type: 'assistant', text: null, toolCalls: [{ id: `${prefix}call${t}`, name: 'lookup', arguments: `{"n":${t}}` }] });
    events.push({ id: `${prefix}t${t}`, type: 'tool', responses: [{ toolCallId: `${prefix}call${t}`, name: 'lookup', data: `{"result":"value ${t}"}` }] });
    events.push({ id: `${prefix}a${t}`, type: 'assistant', text: `answer ${t}` });
  }
  return events;
}

describe('compaction racing with appends', () => {
  const summarizer = new ControlledSummarizer();

  const harness = useService({ summarizer });

  /** `compactions_total` of commanded passes that compacted, from `GET /metrics`. */
  const compactedPasses = async () => {
    const metrics = await harness.http().get('/metrics').expect(200);
    const sample = metrics.text.split('\n').find((l) => /^compactions_total\{/.test(l) && l.includes('origin="command"') && l.includes('outcome="compacted"'));
    return sample ? Number(sample.slice(sample.lastIndexOf(' ') + 1)) : 0;
  };

  it('loses no append, puts events appended during the pass after the summary, and calls the summarizer once', async () => {
    await harness
      .http()
      .post('/v1/sessions/race/events')
      .send({ events: conversation('x', 6) })
      .expect(201);
    const waiting = summarizer.hold();
    const compaction = harness
      .http()
      .post('/v1/sessions/race/compactions')
      .send({ strategy: { type: 'recursive-summarization', maxEventsToKeep: 4, overlapSize: 1 } })
      .then((r) => r);
    await waiting;
    // While the summarizer is busy, clients keep appending.
    const during = conversation('y', 2);
    for (const e of during)
      await harness
        .http()
        .post('/v1/sessions/race/events')
        .send({ events: [e] })
        .expect(201);
    summarizer.release();
    const res = await compaction;
    expect(res.status).toBe(200);
    expect(res.body.outcome).toBe('compacted');
    expect(summarizer.calls).toBe(1);

    const window = await harness.http().get(`/v1/sessions/race/window?minPosition=${res.body.position}`).expect(200);
    const ids: string[] = window.body.events.map((e: { id: string }) => e.id);
    const summaryAt = ids.indexOf(res.body.summary.id);
    expect(summaryAt).toBeGreaterThanOrEqual(0);
    for (const e of during) expect(ids.indexOf(e.id)).toBeGreaterThan(summaryAt);

    const log = await harness.http().get('/v1/sessions/race/events?limit=1000').expect(200);
    const conversationIds = log.body.events
      .filter((e: { eventId?: string; kind?: string }) => e.kind && e.kind !== 'summary')
      .map((e: { eventId: string }) => e.eventId);
    expect(conversationIds).toEqual([...conversation('x', 6), ...during].map((e) => e.id));

    // The audit record of the re-based pass: planned on the revision before the appends, its
    // tokensBefore is the window it replaced (just before its first event), as README says.
    const [item] = (await harness.http().get('/v1/sessions/race/compactions').expect(200)).body.compactions;
    const firstDecisionRevision = BigInt(item.revision) - 2n; // EventsArchived, SummaryInserted, CompactionCompleted
    expect(BigInt(item.basedOnRevision)).toBe(firstDecisionRevision - 1n - BigInt(during.length));
    const replaced = await harness
      .http()
      .get(`/v1/sessions/race/window?atRevision=${firstDecisionRevision - 1n}`)
      .expect(200);
    const planned = await harness.http().get(`/v1/sessions/race/window?atRevision=${item.basedOnRevision}`).expect(200);
    expect(item.tokensBefore).toBe(replaced.body.tokens);
    expect(item.tokensBefore).toBeGreaterThan(planned.body.tokens);
  });

  it('answers 8 identical compactions sent at once with one pass: one summarizer call, 8 equal answers, one decision', async () => {
    await harness
      .http()
      .post('/v1/sessions/dup8/events')
      .send({ events: conversation('d', 6) })
      .expect(201);
    // Count the requests that have read the session's state: all 8 must have before the pass may end.
    const cache = harness.service.app.get(SessionStateCache);
    const load = cache.load.bind(cache);
    let loaded = 0;
    const spy = jest.spyOn(cache, 'load').mockImplementation(async (key) => {
      const state = await load(key);
      if (key === 'default.dup8') loaded++;
      return state;
    });
    try {
      const callsBefore = summarizer.calls;
      const passesBefore = await compactedPasses();
      const waiting = summarizer.hold();
      const body = { strategy: { type: 'recursive-summarization', maxEventsToKeep: 4, overlapSize: 1 } };
      const requests = Array.from({ length: 8 }, () =>
        harness
          .http()
          .post('/v1/sessions/dup8/compactions')
          .send(body)
          .then((r) => r),
      );
      await waiting;
      while (loaded < 8) await new Promise((resolve) => setTimeout(resolve, 5));
      await new Promise((resolve) => setTimeout(resolve, 20));
      summarizer.release();
      const answers = await Promise.all(requests);

      expect(summarizer.calls - callsBefore).toBe(1);
      expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
      expect(answers[0].body).toMatchObject({ outcome: 'compacted', recorded: true });
      for (const a of answers) expect(a.body).toEqual(answers[0].body);
      const log = await harness.service.store.readStream('session-default.dup8');
      expect(log.filter((e) => e.type === COMPACTION_COMPLETED || e.type === COMPACTION_FAILED)).toHaveLength(1);
      // one pass counted: the 7 that shared it are not passes of their own
      expect((await compactedPasses()) - passesBefore).toBe(1);
    } finally {
      spy.mockRestore();
    }
  });

  it('rebuilds read models from empty with rows identical to the incremental ones', async () => {
    await harness
      .http()
      .post('/v1/sessions/rebuild-a/events')
      .send({ events: conversation('r', 5) })
      .expect(201);
    await harness
      .http()
      .post('/v1/sessions/rebuild-a/compactions')
      .send({ strategy: { type: 'turn-window', maxTurns: 2 } })
      .expect(200);
    const last = await harness
      .http()
      .post('/v1/sessions/rebuild-a/events')
      .send({ events: conversation('s', 1) })
      .expect(201);
    await harness.http().get(`/v1/sessions/rebuild-a/window?minPosition=${last.body.position}`).expect(200);

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rebuild-'));
    const fresh = ReadModelStore.open(path.join(dir, 'read-models.sqlite'));
    try {
      await new SessionProjector(fresh).rebuild(harness.service.store);
      expect(dumpReadModels(fresh)).toEqual(dumpReadModels(harness.service.readModels));
    } finally {
      fresh.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
