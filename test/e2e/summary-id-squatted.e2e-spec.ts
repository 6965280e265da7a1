/**
 * A summary id a client took first (newcomer ncapi66 F2): a compaction's summary took the id
 * `summary-<compactionId>`, and compaction ids are deterministic (session, incarnation, base
 * revision, parameters), while a client may append any id of 1–256 characters. A client that
 * appended an event with exactly that id made the pass throw (`completePlan: summaryId … is already
 * the id of an event`): `POST …/compactions` answered 500 `internal` on every retry, dry run
 * included. The summary now takes the first free id of `summary-<compactionId>`,
 * `summary-<compactionId>-2`, … (`summaryIdFor`) that no event of the session's state holds (its
 * window and what came since its last decision); the event holding it is left as it was. An event
 * archived by an earlier decision is not looked for (the pass would read the whole log): the pass
 * still answers 200.
 */
import * as fs from 'node:fs';
import { parseStrategy } from '@lib/compaction';
import { compactionIdFor, compactionParamsKey, sessionKey, type EstimatorName } from '@lib/session';
import { startService, type Harness } from '../support/service-harness';

jest.setTimeout(60_000);

const STRATEGY = { type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 0 };

describe('a summary id a client appended first', () => {
  let service: Harness;
  const http = () => service.http();
  beforeAll(async () => {
    service = await startService();
  });
  afterAll(async () => {
    await service?.stop();
    if (service) fs.rmSync(service.dataDir, { recursive: true, force: true });
  });

  const append = async (s: string, events: Array<Record<string, unknown>>) =>
    (await http().post(`/v1/sessions/${s}/events`).send({ events }).expect(201)).body as { revision: string; position: string };
  const turn = (n: number) => [
    { id: `u${n}`, type: 'user', text: `Question ${n} about the Lisbon trip budget.` },
    { id: `a${n}`, type: 'assistant', text: `Answer ${n}: the budget holds, flights booked.` },
  ];
  /** The id the service gives the pass of STRATEGY on session `s` at `basedOnRevision` (the service's own rule, as the probe predicted it). */
  const predictedCompactionId = (s: string, basedOnRevision: bigint, estimator: EstimatorName) =>
    compactionIdFor(sessionKey('default', s), 0n, basedOnRevision, compactionParamsKey(parseStrategy(STRATEGY), null, estimator));
  type LogEntry = { eventId?: string; kind?: string; type: string; data: { event?: Record<string, unknown>; text?: string } };
  /** Every conversation event and summary of the log (archived ones included): its id, kind and text. */
  const allEvents = async (s: string, position: string) => {
    await service.projected(position);
    const res = await http().get(`/v1/sessions/${s}/events`).query({ limit: 100 }).expect(200);
    return (res.body.events as LogEntry[])
      .filter((e) => e.eventId !== undefined)
      .map((e) => ({ id: e.eventId!, type: e.kind!, text: e.data.event?.text ?? e.data.text, logType: e.type }));
  };

  it('given a user event holding the id the next pass would give its summary, then the pass and its dry run answer 200 compacted under another summary id, the event untouched', async () => {
    const s = 'squatted-active';
    await append(s, [...turn(1), ...turn(2)]); // revisions 0–3
    const estimator = (await http().post(`/v1/sessions/${s}/compactions`).send({ strategy: STRATEGY, dryRun: true }).expect(200)).body.estimator;
    const squatted = `summary-${predictedCompactionId(s, 4n, estimator)}`;
    const squatter = { id: squatted, type: 'user', text: 'An id like any other.' };
    expect((await append(s, [squatter])).revision).toBe('4');

    const dry = await http().post(`/v1/sessions/${s}/compactions`).send({ strategy: STRATEGY, dryRun: true });
    expect({ status: dry.status, outcome: dry.body.outcome, recorded: dry.body.recorded }).toEqual({ status: 200, outcome: 'compacted', recorded: false });
    expect(dry.body.kept).toContain(squatted);
    expect(dry.body.kept).toContain(`${squatted}-2`);
    expect(new Set(dry.body.kept).size).toBe(dry.body.kept.length);

    const res = await http().post(`/v1/sessions/${s}/compactions`).send({ strategy: STRATEGY });
    expect({ status: res.status, outcome: res.body.outcome, code: res.body.code }).toEqual({ status: 200, outcome: 'compacted', code: undefined });
    expect(res.body.compactionId).toBe(predictedCompactionId(s, 4n, estimator));
    expect(res.body.summary.id).toBe(`${squatted}-2`);
    // the dry run named the summary where the pass put it
    expect(res.body.kept).toEqual(dry.body.kept);
    const events = await allEvents(s, res.body.position);
    expect(events.filter((e) => e.id === squatted)).toEqual([{ ...squatter, logType: 'ConversationEventAppended' }]);
    expect(events.filter((e) => e.id === `${squatted}-2`)).toEqual([
      { id: `${squatted}-2`, type: 'summary', text: res.body.summary.text, logType: 'SummaryInserted' },
    ]);
    const window = (await http().get(`/v1/sessions/${s}/window`).expect(200)).body;
    const ids = (window.events as Array<{ id: string }>).map((e) => e.id);
    expect(ids).toEqual(res.body.kept);
    expect((window.events as Array<{ id: string; type: string }>).find((e) => e.id === squatted)).toMatchObject({ type: 'user', text: squatter.text });
  });

  it('given a client-written summary holding the id, and one holding the next, then the summary takes the first free one', async () => {
    const s = 'squatted-twice';
    await append(s, [...turn(1), ...turn(2)]); // revisions 0–3
    const estimator = (await http().post(`/v1/sessions/${s}/compactions`).send({ strategy: STRATEGY, dryRun: true }).expect(200)).body.estimator;
    const squatted = `summary-${predictedCompactionId(s, 5n, estimator)}`;
    await append(s, [
      { id: squatted, type: 'summary', shadowPrompt: 'What was said?', text: 'A client-written summary.' },
      { id: `${squatted}-2`, type: 'user', text: 'Another id like any other.' },
    ]); // revisions 4–5
    const res = await http().post(`/v1/sessions/${s}/compactions`).send({ strategy: STRATEGY });
    expect({ status: res.status, outcome: res.body.outcome }).toEqual({ status: 200, outcome: 'compacted' });
    expect(res.body.summary.id).toBe(`${squatted}-3`);
    const events = await allEvents(s, res.body.position);
    expect(events.filter((e) => e.id === squatted)).toEqual([expect.objectContaining({ type: 'summary', text: 'A client-written summary.' })]);
    expect(events.filter((e) => e.id === `${squatted}-2`)).toEqual([expect.objectContaining({ type: 'user', text: 'Another id like any other.' })]);
  });

  it('given the event holding the id archived by an earlier compaction, then the pass answers 200 compacted and leaves that event as it was', async () => {
    // The state no longer holds an archived event's id, and the log is not read back for it (that would cost every pass the
    // whole log): the summary may take that id, as documented, but the pass neither fails nor changes the archived event.
    const s = 'squatted-archived';
    // u1 a1 (0–1), the squatter (2), u2 a2 (3–4); the first pass archives u1, a1 and the squatter (its decision: 5–7);
    // u3 a3 (8–9); the second pass is based on revision 9.
    await append(s, turn(1));
    const estimator = (await http().post(`/v1/sessions/${s}/compactions`).send({ strategy: STRATEGY, dryRun: true }).expect(200)).body.estimator;
    const squatted = `summary-${predictedCompactionId(s, 9n, estimator)}`;
    const squatter = { id: squatted, type: 'user', text: 'Archived long before the pass it names.' };
    await append(s, [squatter, ...turn(2)]);
    const first = await http().post(`/v1/sessions/${s}/compactions`).send({ strategy: STRATEGY }).expect(200);
    expect(first.body).toMatchObject({ outcome: 'compacted', revision: '7' });
    expect(first.body.archived).toContain(squatted);
    expect((await append(s, turn(3))).revision).toBe('9');
    const res = await http().post(`/v1/sessions/${s}/compactions`).send({ strategy: STRATEGY });
    expect({ status: res.status, outcome: res.body.outcome }).toEqual({ status: 200, outcome: 'compacted' });
    expect(res.body.compactionId).toBe(predictedCompactionId(s, 9n, estimator));
    const events = await allEvents(s, res.body.position);
    expect(events.filter((e) => e.id === squatted && e.logType === 'ConversationEventAppended')).toEqual([
      { ...squatter, logType: 'ConversationEventAppended' },
    ]);
  });
});
