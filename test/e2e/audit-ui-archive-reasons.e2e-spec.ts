/**
 * The audit page at `/ui` in a real browser (playwright-core driving Debian's Chromium) shows why a
 * compaction archived each event (newcomer ncui69 F2): in its details, each archived event of the
 * Before column carries its reason from the history item's `archivedBecause` (the strategy's cut,
 * the cut moved to the turn start, a superseded system message, a replaced summary), and a failed
 * pass says what it had planned to archive and summarize (`plannedArchivedIds`). The API's side:
 * compaction-archive-reasons.e2e-spec.ts. Open mode; one service. Runs in a few seconds.
 */
import { ControlledSummarizer } from '../support/service-harness';
import { turnsWithTwoSystemMessages } from '../support/turns-with-two-system-messages';
import { describeWithChromium } from '../support/chromium';
import { useAuditPage } from '../support/audit-page';

const turns = turnsWithTwoSystemMessages;

describeWithChromium('audit page in a browser: why a compaction archived each event', () => {
  // A blank reply for the events of the session "fails": a failure (DESIGN §3.7).
  const ui = useAuditPage({ summarizer: new ControlledSummarizer((request) => (request.coveredIds.some((id) => id.startsWith('f-')) ? '' : 'SUMMARY')) });
  const { itInPage } = ui;

  /** Opens the compaction's details and answers each Before event archived: [id, its reason tag, the tag's tooltip] (null for no tag). */
  async function archivedReasons(sessionId: string, compactionId: string): Promise<Array<[string, string | null, string | null]>> {
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${sessionId}/c/${compactionId}`);
    await ui.page.locator(`#diff[data-compaction="${compactionId}"]`).waitFor();
    // Runs in the page (the test's TypeScript has no DOM types: the browser's objects are typed loosely).
    type Element = { getAttribute(name: string): string | null; querySelector(selector: string): (Element & { textContent: string | null }) | null };
    return ui.page.locator('#diff .diff > div:first-child li[data-change=archived]').evaluateAll((rows) =>
      (rows as unknown as Element[]).map((row): [string, string | null, string | null] => {
        const tag = row.querySelector('.badge.reason');
        return [row.getAttribute('data-event') ?? '', tag?.textContent ?? null, tag?.getAttribute('title') ?? null];
      }),
    );
  }

  itInPage("tags each archived event with its reason: the strategy's cut, the cut moved to the turn start, a superseded system message", async () => {
    const path = { sessionId: 'reasons' };
    await ui.client.POST('/v1/sessions/{sessionId}/events', { params: { path }, body: { events: turns('') as never } });
    const { data: pass } = await ui.client.POST('/v1/sessions/{sessionId}/compactions', {
      params: { path },
      body: { strategy: { type: 'sliding-window', maxEvents: 3 } },
    });
    expect(pass!.archived).toEqual(['sys1', 'u1', 'a1', 'u2', 'a2']);
    const cut = ["strategy's cut", "before the strategy's own cut (DESIGN §3.4)"];
    expect(await archivedReasons('reasons', pass!.compactionId!)).toEqual([
      ['sys1', 'superseded system message', 'a superseded system message: a newer one replaced it; it was not sent to the model in the OpenAI rendering'],
      ['u1', ...cut],
      ['a1', ...cut],
      ['u2', ...cut],
      ['a2', 'cut moved to the turn start', 'the strategy kept it; the kept part must start at a user event, DESIGN §3.3.1'],
    ]);
    // The superseded one keeps its kind label and note.
    const kind = ui.page.locator('#diff li[data-event="sys1"][data-change=archived] .kind');
    expect(await kind.textContent()).toBe('system · superseded');
    // In the details of the compaction that archived it (newcomer ncrecheck70 F7: "the next compaction archives it").
    expect(await kind.getAttribute('title')).toBe('a newer system message replaced it: not sent to the model; this compaction archived it');
    expect(await ui.page.locator('#planned-archive').count()).toBe(0);
  });

  itInPage('says what a failed pass had planned to archive and summarize, and that only the superseded system message went', async () => {
    const path = { sessionId: 'fails' };
    await ui.client.POST('/v1/sessions/{sessionId}/events', { params: { path }, body: { events: turns('f-') as never } });
    const { data: pass } = await ui.client.POST('/v1/sessions/{sessionId}/compactions', {
      params: { path },
      body: { strategy: { type: 'recursive-summarization', maxEventsToKeep: 2 } },
    });
    expect(pass!.outcome).toBe('failed');
    expect(await archivedReasons('fails', pass!.compactionId!)).toEqual([
      ['f-sys1', 'superseded system message', 'a superseded system message: a newer one replaced it; it was not sent to the model in the OpenAI rendering'],
    ]);
    // planned: f-sys1, f-u1, f-a1, f-u2, f-a2; the superseded f-sys1 is archived, not summarized
    expect(await ui.page.locator('#planned-archive').innerText()).toBe(
      'planned to archive 5 events (f-sys1, f-u1, f-a1, f-u2 and 1 more) and summarize 4 of them; the summarizer failed, so only the superseded system message was archived',
    );
  });
  itInPage('labels an archived notice "notice" in the Before list, as the timeline does (newcomer ncrecheck70 F7)', async () => {
    const path = { sessionId: 'notices' };
    const events = [
      { id: 'n-u1', type: 'user', text: 'a question' },
      { id: 'n-note', type: 'system', notice: true, text: 'a file arrived' },
      { id: 'n-a1', type: 'assistant', text: 'an answer' },
      { id: 'n-u2', type: 'user', text: 'another question' },
      { id: 'n-a2', type: 'assistant', text: 'another answer' },
    ];
    await ui.client.POST('/v1/sessions/{sessionId}/events', { params: { path }, body: { events: events as never } });
    const { data: pass } = await ui.client.POST('/v1/sessions/{sessionId}/compactions', {
      params: { path },
      body: { strategy: { type: 'sliding-window', maxEvents: 2 } },
    });
    expect(pass!.archived).toContain('n-note');
    await archivedReasons('notices', pass!.compactionId!);
    expect(await ui.page.locator('#diff li[data-event="n-note"][data-change=archived] .kind').textContent()).toBe('notice');
  });
});
