/**
 * Races (issue 7 item 2): 8 concurrent compaction commands on one session while appends continue.
 * No append is lost, at most one decision is recorded per base revision, and every window the
 * service serves (OpenAI format) is valid.
 */
import { COMPACTION_COMPLETED, COMPACTION_FAILED, validateOpenAiWindow } from '@lib/session';
import { ControlledSummarizer, useService } from '../support/service-harness';
import { streamOf } from '../support/log-checks';

function turn(prefix: string, n: number) {
  return [
    { id: `${prefix}u${n}`, type: 'user', text: `question ${n}: rebook ${prefix}${n}` },
    { id: `${prefix}c${n}`, type: 'assistant', text: null, toolCalls: [{ id: `${prefix}call${n}`, name: 'lookup', arguments: `{"n":${n}}` }] },
    { id: `${prefix}t${n}`, type: 'tool', responses: [{ toolCallId: `${prefix}call${n}`, name: 'lookup', data: `{"seat":"${n}A"}` }] },
    { id: `${prefix}a${n}`, type: 'assistant', text: `done ${n}` },
  ];
}

const STRATEGIES = [
  { type: 'recursive-summarization', maxEventsToKeep: 6, overlapSize: 1 },
  { type: 'recursive-summarization', maxEventsToKeep: 6, overlapSize: 1 },
  { type: 'recursive-summarization', maxEventsToKeep: 6, overlapSize: 1 },
  { type: 'sliding-window', maxEvents: 8 },
  { type: 'sliding-window', maxEvents: 8 },
  { type: 'turn-window', maxTurns: 2 },
  { type: 'token-count', maxTokens: 120 },
  { type: 'rolling-summary', keepTurns: 2, summarizeAtTokens: 50 },
];

describe('8 concurrent compactions on one session while appends continue', () => {
  const summarizer = new ControlledSummarizer();

  const harness = useService({ summarizer });

  it('loses no append, records at most one decision per base revision, and serves only valid windows', async () => {
    const http = harness.http;
    const acked: string[] = [];
    const first = turn('r', 0).concat(turn('r', 1), turn('r', 2), turn('r', 3), turn('r', 4));
    await http().post('/v1/sessions/race8/events').send({ events: first }).expect(201);
    acked.push(...first.map((e) => e.id));
    let next = 5;
    const windows: Array<{ position: string; compactionId: string }> = [];
    let lastPosition = '0';

    for (let round = 0; round < 4; round++) {
      if (round > 0) {
        const more = [next++, next++, next++].flatMap((n) => turn('r', n));
        await http().post('/v1/sessions/race8/events').send({ events: more }).expect(201);
        acked.push(...more.map((e) => e.id));
      }
      // Hold the summarizer so the 8 passes overlap, and append while they wait.
      const held = summarizer.hold();
      const compact = (strategy: object) =>
        http()
          .post('/v1/sessions/race8/compactions')
          .send({ strategy })
          .then((r) => r);
      // the summarizing passes first, so one of them is surely waiting for the summarizer …
      const compactions = STRATEGIES.filter((s) => s.type.endsWith('summarization')).map(compact);
      const summarizing = await Promise.race([held.then(() => true), Promise.all(compactions).then(() => false)]);
      expect(summarizing).toBe(true);
      // … while the others run and clients append
      compactions.push(...STRATEGIES.filter((s) => !s.type.endsWith('summarization')).map(compact));
      for (let k = 0; k < 3; k++) {
        const events = turn(`r`, next++);
        const res = await http().post('/v1/sessions/race8/events').send({ events });
        expect(res.status).toBe(201);
        acked.push(...events.map((e) => e.id));
        lastPosition = res.body.position;
      }
      summarizer.release();
      const answers = await Promise.all(compactions);
      for (const a of answers) {
        expect(a.status).toBe(200);
        expect(['compacted', 'noop', 'not-triggered', 'conflict', 'failed']).toContain(a.body.outcome);
        if (a.body.position) windows.push({ position: a.body.position, compactionId: a.body.compactionId });
      }
    }

    // no append lost: every acknowledged id is in the full log, in order
    await http().get(`/v1/sessions/race8/window?minPosition=${lastPosition}`).expect(200);
    for (const w of windows) await http().get(`/v1/sessions/race8/window?minPosition=${w.position}`).expect(200);
    const log = await http().get('/v1/sessions/race8/events?limit=1000').expect(200);
    const conversationIds = (log.body.events as Array<{ eventId?: string; kind?: string }>).filter((e) => e.kind && e.kind !== 'summary').map((e) => e.eventId);
    expect(conversationIds).toEqual(acked);

    // at most one decision per base revision
    const recorded = await harness.service.store.readStream(streamOf('race8'));
    const byBase = new Map<string, string[]>();
    for (const e of recorded) {
      if (e.type !== COMPACTION_COMPLETED && e.type !== COMPACTION_FAILED) continue;
      const data = e.data as { basedOnRevision: string; compactionId: string };
      byBase.set(data.basedOnRevision, [...(byBase.get(data.basedOnRevision) ?? []), data.compactionId]);
    }
    expect(byBase.size).toBeGreaterThan(0);
    for (const [base, ids] of byBase) expect({ base, ids }).toEqual({ base, ids: ids.slice(0, 1) });

    // every window is valid: the current one, and the one right after every recorded decision
    const current = await http().get('/v1/sessions/race8/window?format=openai').expect(200);
    expect(validateOpenAiWindow(current.body.messages)).toEqual([]);
    for (const e of recorded) {
      if (e.type !== COMPACTION_COMPLETED) continue;
      const at = await http().get(`/v1/sessions/race8/window?format=openai&atRevision=${e.revision}`).expect(200);
      expect({ revision: e.revision.toString(), problems: validateOpenAiWindow(at.body.messages) }).toEqual({ revision: e.revision.toString(), problems: [] });
    }
  });
});
