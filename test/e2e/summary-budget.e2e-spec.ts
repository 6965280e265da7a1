/**
 * The summary budget through the HTTP API, with the default (extractive) summarizer: a summary is
 * sized so that its pass leaves room (newcomer report: rolling-summary re-summarized after every
 * turn once its summary alone passed summarizeAtTokens; a small recursive pass tripled the window).
 * Runtime: about 15 s (in-process service on a temporary embedded store).
 */
import { AutoCompactionScheduler } from '@lib/session';
import { useService } from '../support/service-harness';

type Json = Record<string, unknown>;

describe('summary budget (extractive summarizer) through the HTTP API', () => {
  const harness = useService();
  const http = () => harness.http();

  it('rolling-summary keepTurns 2, summarizeAtTokens 300, 80 short turns: a pass every few turns, not after every turn; summaries within half the threshold', async () => {
    const s = 'rolling-grow';
    const threshold = 300;
    await http()
      .put(`/v1/sessions/${s}/policy`)
      .send({ strategy: { type: 'rolling-summary', keepTurns: 2, summarizeAtTokens: threshold } })
      .expect(200);
    const scheduler = harness.service.app.get(AutoCompactionScheduler);
    const turns = 80;
    let position = '0';
    for (let t = 0; t < turns; t++) {
      const messages = [
        { role: 'user', content: `Please check order number ORD${1000 + t} for customer C${t} at /srv/data/file${t}.json and update status` },
        { role: 'assistant', content: `Order ORD${1000 + t} updated; value ${t * 17} USD.` },
      ];
      position = (await http().post(`/v1/sessions/${s}/messages`).send({ messages }).expect(201)).body.position;
      await scheduler.whenIdle();
    }
    const history = (await http().get(`/v1/sessions/${s}/compactions?limit=100`).expect(200)).body.compactions as Json[];
    // before the budget: 70 passes (and 70 summarizer calls) in 80 turns, the summary at ~680 tokens
    expect(history.length).toBeGreaterThan(0);
    expect(history.length).toBeLessThanOrEqual(turns / 4);
    expect(history.every((c) => c.outcome === 'compacted')).toBe(true);
    const window = (await http().get(`/v1/sessions/${s}/window?minPosition=${position}`).expect(200)).body;
    const summary = (window.events as Json[]).find((e) => e.type === 'summary');
    expect(summary).toBeDefined();
    expect(summary!.tokens).toBeLessThanOrEqual(threshold / 2);
    // the newest archived turns are what the summary is about
    expect(String(summary!.text)).toMatch(/ORD10[67]\d/);
    expect(window.tokens).toBeLessThan(threshold + 150);
  });

  it('a small recursive-summarization pass does not triple the window; it reports compacted with tokensEstimatedSaved floored at 0', async () => {
    const s = 'recursive-small';
    const events: Json[] = [
      { id: 's', type: 'system', text: 'Be brief.' },
      { id: 'u1', type: 'user', text: 'hi' },
      { id: 'a1', type: 'assistant', text: 'hello' },
      { id: 'u2', type: 'user', text: 'book 12' },
      { id: 'a2', type: 'assistant', text: 'booked 12' },
      { id: 'u3', type: 'user', text: 'thanks' },
      { id: 'a3', type: 'assistant', text: 'bye' },
    ];
    await http().post(`/v1/sessions/${s}/events`).send({ events }).expect(201);
    const pass = (
      await http()
        .post(`/v1/sessions/${s}/compactions`)
        .send({ strategy: { type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 1 } })
        .expect(200)
    ).body;
    expect(pass.outcome).toBe('compacted');
    expect(pass.archived).toEqual(['u1', 'a1', 'u2', 'a2']);
    // the summary carries the archived lines as they are (nothing lost) …
    const window = (await http().get(`/v1/sessions/${s}/window?minPosition=${pass.position}`).expect(200)).body;
    const summary = (window.events as Json[]).find((e) => e.type === 'summary')!;
    for (const text of ['hi', 'hello', 'book 12', 'booked 12']) expect(String(summary.text)).toContain(text);
    // … at the cost of its shadow prompt line over what it replaces (before: 27 → 96 tokens, the extractive sections)
    expect(pass.tokensAfter).toBeLessThanOrEqual(pass.tokensBefore + 20);
    expect(pass.tokensEstimatedSaved).toBe(0);
  });
});
