/**
 * A compaction racing with appends (issue 4, acceptance 3), and read models rebuilt from an empty
 * database equal the incremental ones (acceptance 4).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ReadModelStore, SessionProjector, dumpReadModels } from '@lib/session';
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
