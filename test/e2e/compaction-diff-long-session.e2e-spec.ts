/**
 * A compaction's diff of a long session (issue 14 follow-up) is, byte for byte, what folding the
 * whole log at once gives: the diff now finds the decision's first revision through
 * `session_log_by_compaction`, reads the decision's head without its archived ids, folds the
 * window before the decision and then on through the decision's events from that revision (no
 * copy of the state), and orders the window only when an archived event holds tool calls. The
 * reference here is the way the diff was computed before: the whole log read in one call and
 * folded with `foldSessionWindow` up to each side, the decision's first revision found in the
 * log, its record read whole.
 *
 * Sessions: one with tool calls (answered, and abandoned ones archived while open whose late
 * answers are then archived on arrival) compacted three times by three strategies and estimators;
 * one long erasure-free session of plain turns; one erased and written again (its revisions
 * continue after the erased ones).
 */
import * as fs from 'node:fs';
import { sessionKey, sessionStream, foldSessionWindow, orderedWindow, ReadModelStore } from '@lib/session';
import { diffWindows } from '../../libs/session/src/queries/compaction-diff';
import { getCompaction } from '../../libs/session/src/read-side/queries/compaction-history-query';
import { archivedOnArrivalItems } from '../../libs/session/src/read-side/queries/compaction-history-item';
import { startService, type Harness } from '../support/service-harness';

type Event = Record<string, unknown>;

/** Turns `from`..`to - 1` of a conversation with tool calls: every 5th turn a call answered, every 7th (from the 3rd) one abandoned (no answer, a user event follows). */
function toolTurns(prefix: string, from: number, to: number): Event[] {
  const events: Event[] = [];
  for (let t = from; t < to; t++) {
    events.push({ id: `${prefix}u${t}`, type: 'user', text: `question ${t} about booking ${prefix}${t}, and what it costs` });
    if (t % 5 === 0) {
      events.push({ id: `${prefix}c${t}`, type: 'assistant', text: null, toolCalls: [{ id: `${prefix}call${t}`, name: 'lookup', arguments: `{"n":${t}}` }] });
      events.push({ id: `${prefix}t${t}`, type: 'tool', responses: [{ toolCallId: `${prefix}call${t}`, name: 'lookup', data: `{"result":"value ${t}"}` }] });
    }
    if (t % 7 === 3)
      events.push({
        id: `${prefix}k${t}`,
        type: 'assistant',
        text: 'checking',
        toolCalls: [{ id: `${prefix}open${t}`, name: 'book', arguments: `{"n":${t}}` }],
      });
    events.push({ id: `${prefix}a${t}`, type: 'assistant', text: `answer ${t}: the booking ${prefix}${t} is confirmed` });
  }
  return events;
}

/** Plain turns `from`..`to - 1` (a user event and an answer each). */
function plainTurns(prefix: string, from: number, to: number): Event[] {
  const events: Event[] = [];
  for (let t = from; t < to; t++) {
    events.push({ id: `${prefix}u${t}`, type: 'user', text: `turn ${t} about the invoice and refund number ${(t * 31) % 997}` });
    events.push({ id: `${prefix}a${t}`, type: 'assistant', text: `noted ${t}, and what the customer asked next` });
  }
  return events;
}

// Thousands of events appended and folded per test: minutes on a loaded 2-core machine.
describe("a long session's compaction diff is the whole-log fold's, byte for byte", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startService();
  });
  afterAll(async () => {
    await harness.stop();
    fs.rmSync(harness.dataDir, { recursive: true, force: true });
  });

  const append = async (sessionId: string, events: Event[]): Promise<string> => {
    let position = '';
    for (let i = 0; i < events.length; i += 1000)
      position = (
        await harness
          .http()
          .post(`/v1/sessions/${sessionId}/events`)
          .send({ events: events.slice(i, i + 1000) })
          .expect(201)
      ).body.position as string;
    return position;
  };
  const compact = async (sessionId: string, body: object): Promise<string> => {
    const answer = await harness.http().post(`/v1/sessions/${sessionId}/compactions`).send(body).expect(200);
    expect(answer.body.outcome).toBe('compacted');
    return answer.body.compactionId as string;
  };

  /** The diff as it was computed before: the whole log read at once, folded to each side; the decision's first revision and record from the log and its whole record. */
  const foldedDiff = async (sessionId: string, compactionId: string): Promise<string> => {
    const record = getCompaction(harness.service.app.get(ReadModelStore), 'default', sessionId, compactionId)!;
    const log = await harness.service.store.readStream(sessionStream(sessionKey('default', sessionId)));
    const own = log.filter((e) => (e.data as { compactionId?: string }).compactionId === compactionId).map((e) => e.revision);
    const first = own.length > 0 ? own.reduce((a, b) => (b < a ? b : a)) : record.revision;
    const before = foldSessionWindow(log.filter((e) => e.revision < first));
    const after = foldSessionWindow(log.filter((e) => e.revision <= record.revision));
    const diff = await diffWindows(
      { sessionId, compactionId, estimator: record.data.estimator, recordedAt: log.find((e) => e.revision === record.revision)!.created.toISOString() },
      { revision: first - 1n, entries: orderedWindow(before) },
      { revision: record.revision, entries: orderedWindow(after) },
      archivedOnArrivalItems(record.archivedOnArrival),
    );
    return JSON.stringify(diff);
  };

  const expectSameDiffs = async (sessionId: string, compactionIds: string[], position: string) => {
    await harness.projected(position);
    const diffs = [];
    for (const id of compactionIds) {
      const answer = await harness.http().get(`/v1/sessions/${sessionId}/compactions/${id}/diff`).expect(200);
      expect(answer.text).toBe(await foldedDiff(sessionId, id));
      diffs.push(
        answer.body as { before: { events: Array<{ id: string; change: string }> }; archivedIds: string[]; archivedOnArrival: Array<{ eventId: string }> },
      );
    }
    return diffs;
  };

  it('with tool calls, abandoned calls archived while open and their late answers archived on arrival, over three compactions', async () => {
    await append('tools', toolTurns('x', 0, 1400));
    const c1 = await compact('tools', { strategy: { type: 'token-count', maxTokens: 3000 } });
    // Late answers to calls c1 archived while open: archived on arrival, attributed to c1.
    await append(
      'tools',
      [3, 10, 17].map((t) => ({ id: `xlate${t}`, type: 'tool', responses: [{ toolCallId: `xopen${t}`, name: 'book', data: 'DONE' }] })),
    );
    await append('tools', toolTurns('y', 0, 1000));
    const c2 = await compact('tools', { strategy: { type: 'turn-window', maxTurns: 40 }, estimator: 'chars' });
    await append('tools', [{ id: 'ylate24', type: 'tool', responses: [{ toolCallId: 'yopen24', name: 'book', data: 'DONE' }] }]);
    await append('tools', toolTurns('z', 0, 600));
    const c3 = await compact('tools', { strategy: { type: 'sliding-window', maxEvents: 100 }, estimator: 'o200k_base' });
    const position = await append('tools', toolTurns('w', 0, 10));
    const [d1, d2] = await expectSameDiffs('tools', [c1, c2, c3], position);
    // What the comparison covered: windows of thousands of events, open calls archived, late answers.
    expect(d1.before.events.length).toBeGreaterThan(3500);
    expect(d1.archivedIds).toEqual(expect.arrayContaining(['xk3', 'xk10', 'xk17']));
    expect(d1.archivedOnArrival.map((a) => a.eventId)).toEqual(['xlate3', 'xlate10', 'xlate17']);
    expect(d2.archivedOnArrival.map((a) => a.eventId)).toEqual(['ylate24']);
  }, 300_000);

  it('a long erasure-free session of plain turns, compacted twice', async () => {
    await append('plain', plainTurns('p', 0, 4000));
    const c1 = await compact('plain', { strategy: { type: 'token-count', maxTokens: 2000 } });
    await append('plain', plainTurns('q', 0, 2500));
    const c2 = await compact('plain', { strategy: { type: 'token-count', maxTokens: 2000 } });
    const position = await append('plain', plainTurns('r', 0, 5));
    const [d1, d2] = await expectSameDiffs('plain', [c1, c2], position);
    expect(d1.before.events.length).toBe(8000);
    expect(d2.before.events.length).toBeGreaterThan(5000);
  }, 300_000);

  it('a session erased and written again (its revisions continue after the erased ones)', async () => {
    await append('again', plainTurns('e', 0, 300));
    await harness.http().delete('/v1/sessions/again').expect(200);
    await append('again', toolTurns('f', 0, 700));
    const c1 = await compact('again', { strategy: { type: 'token-count', maxTokens: 1500 } });
    const position = await append('again', toolTurns('g', 0, 5));
    const [d1] = await expectSameDiffs('again', [c1], position);
    expect(d1.before.events.length).toBeGreaterThan(1700);
  }, 300_000);
});
