/**
 * The audit trail says why each event left the window (newcomer ncui69 F2: only re-running the
 * planner showed that an event which fitted the strategy went because the cut moved forward to the
 * next user event, DESIGN §3.3.1, and a failed pass did not record what it had planned to summarize).
 * A compaction's history item carries `archivedBecause`, a partition of its `archivedIds` by rule,
 * and a failed one `plannedArchivedIds`.
 */
import { ControlledSummarizer, useService } from '../support/service-harness';
import { turnsWithTwoSystemMessages } from '../support/turns-with-two-system-messages';

describe('why a compaction archived each event (history item)', () => {
  // A blank reply for the session named "fails": a failure (DESIGN §3.7).
  const summarizer = new ControlledSummarizer((request) => (request.coveredIds.some((id) => id.startsWith('f-')) ? '' : 'SUMMARY'));
  const harness = useService({ summarizer });
  const http = () => harness.http();
  const turns = turnsWithTwoSystemMessages;
  const historyItem = async (session: string, compactionId: string) =>
    (await http().get(`/v1/sessions/${session}/compactions/${compactionId}`).expect(200)).body as Record<string, unknown>;

  it('sliding-window: the strategy cut, the cut moved to a turn start and the superseded system message, apart', async () => {
    await http()
      .post('/v1/sessions/s/events')
      .send({ events: turns('') })
      .expect(201);
    // 6 real events, 3 kept by the strategy: its cut is before a2, which goes too (the kept part starts at u3).
    const pass = await http()
      .post('/v1/sessions/s/compactions')
      .send({ strategy: { type: 'sliding-window', maxEvents: 3 } })
      .expect(200);
    expect(pass.body.archived).toEqual(['sys1', 'u1', 'a1', 'u2', 'a2']);
    const item = await historyItem('s', pass.body.compactionId);
    expect(item.archivedBecause).toEqual({ strategyCut: ['u1', 'a1', 'u2'], turnStart: ['a2'], supersededSystem: ['sys1'], replacedSummaries: [] });
    expect(item.plannedArchivedIds).toBeNull();
  });

  it('a failed pass: its superseded system message, and what it had planned to archive and summarize', async () => {
    await http()
      .post('/v1/sessions/fails/events')
      .send({ events: turns('f-') })
      .expect(201);
    const pass = await http()
      .post('/v1/sessions/fails/compactions')
      .send({ strategy: { type: 'recursive-summarization', maxEventsToKeep: 2 } })
      .expect(200);
    expect(pass.body.outcome).toBe('failed');
    const item = await historyItem('fails', pass.body.compactionId);
    expect(item.archivedIds).toEqual(['f-sys1']);
    expect(item.archivedBecause).toEqual({ strategyCut: [], turnStart: [], supersededSystem: ['f-sys1'], replacedSummaries: [] });
    expect(item.plannedArchivedIds).toEqual(['f-sys1', 'f-u1', 'f-a1', 'f-u2', 'f-a2']);
  });
});
