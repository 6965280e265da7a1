/**
 * The audit page at `/ui` (playwright-core driving Debian's Chromium, as in audit-ui.e2e-spec.ts;
 * docs/audit-page-and-client.md) on what a probe found (newcomer ncui74 F2, F3, F5–F7):
 *  - stored text is laid out without kerning: a long run of one letter (100,000 × "A" in a
 *    compaction's systemPrompt, or shown whole by "show all") froze Chromium's layout for up to 79 s;
 *  - "Go to revision" into an erased earlier life opens the window of the revision gone to, not a
 *    400 for the revision typed;
 *  - stacked combining marks paint inside their own row's text only: not over the row's header,
 *    nor over the row above;
 *  - a recall hit's "archived by" link from the session list to another session's compaction
 *    moves the focus to the heading of the compaction's details;
 *  - the compaction list's short id stays on one line at 1280 px.
 * Open mode; one service; the default (extractive) summarizer.
 */
import type { Page } from 'playwright-core';
import { describeWithChromium, PAGE_VIEWPORT, waitInPage } from '../support/chromium';
import { useAuditPage } from '../support/audit-page';

const KERN = 'st-kerning';
const ZALGO = 'st-zalgo';
const REBORN = 'st-reborn';
const RECALLED = 'st-recalled';
/** 100,000 × "A": the longest systemPrompt a strategy may carry, and a message "show all" shows whole. */
const RUN = 'A'.repeat(100_000);
/** 21 combining marks above (U+0300–U+0314) on each of 25 letters: a band of marks far taller than a line (564 units: not cut). */
const MARKS = Array.from({ length: 21 }, (_, i) => String.fromCodePoint(0x300 + i)).join('');
const ZALGO_TEXT = `Please refund ${`W${MARKS}`.repeat(25)}`;

/**
 * Every element on the page that shows stored text (`.stored` and what is inside one, such as a
 * hidden character's marker or a recall hit's `<mark>`), by kind (`tag.class`), with its computed
 * `font-kerning` values.
 */
const kerningOfStoredText = (page: Page) =>
  // a string: the spec's TypeScript has no DOM types
  page.evaluate<Record<string, string[]>>(`(() => {
    const kinds = {};
    for (const el of document.querySelectorAll('.stored, .stored *')) {
      const kind = [el.tagName.toLowerCase() + (el.id ? '#' + el.id : ''), ...[...el.classList].sort()].join('.');
      kinds[kind] = [...new Set([...(kinds[kind] ?? []), getComputedStyle(el).fontKerning])];
    }
    return kinds;
  })()`);

describeWithChromium('audit page: stored text without kerning, erased-life windows, clipped marks, recall focus, short ids', () => {
  const ui = useAuditPage();
  const { itInPage } = ui;
  let kernCompaction = '';
  let recalledCompaction = '';

  const append = async (sessionId: string, events: object[]) => {
    const { response } = await ui.client.POST('/v1/sessions/{sessionId}/events', { params: { path: { sessionId } }, body: { events: events as never } });
    expect(response.status).toBe(201);
  };
  const turns = (prefix: string, n: number, word = 'wombat') =>
    Array.from({ length: n }, (_, i) => [
      { id: `${prefix}u${i}`, type: 'user', text: `Question ${i} about the ${word} ORD-${i}` },
      { id: `${prefix}a${i}`, type: 'assistant', text: `Answer ${i}` },
    ]).flat();

  beforeAll(async () => {
    await append(KERN, [
      { id: 's1', type: 'system', text: 'sys' },
      { id: 'u1', type: 'user', text: 'please refund order 7' },
      { id: 'a1', type: 'assistant', text: RUN },
      { id: 'u2', type: 'user', text: 'a hidden \u202Echaracter' },
      ...turns('k', 3),
    ]);
    const { data } = await ui.client.POST('/v1/sessions/{sessionId}/compactions', {
      params: { path: { sessionId: KERN } },
      body: { strategy: { type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 1, systemPrompt: RUN } },
    });
    expect(data!.outcome).toBe('compacted');
    kernCompaction = data!.compactionId!;

    await append(ZALGO, [
      { id: 'z1', type: 'user', text: 'look up order 12345' },
      { id: 'z2', type: 'assistant', text: null, toolCalls: [{ id: 'call_z', name: 'lookup', arguments: '{"order":"12345"}' }] },
      { id: 'z3', type: 'tool', responses: [{ toolCallId: 'call_z', name: 'lookup', data: ZALGO_TEXT }] },
      { id: 'z4', type: 'assistant', text: `Z${MARKS}${MARKS} done` },
    ]);

    // life 1: revisions 0–5, erased; written again from revision 6.
    await append(REBORN, turns('r1', 3));
    await ui.client.DELETE('/v1/sessions/{sessionId}', { params: { path: { sessionId: REBORN } } });
    await append(REBORN, turns('r2', 2));

    await append(RECALLED, turns('q', 4, 'quokkaword'));
    const recalled = await ui.client.POST('/v1/sessions/{sessionId}/compactions', {
      params: { path: { sessionId: RECALLED } },
      body: { strategy: { type: 'sliding-window', maxEvents: 2 } },
    });
    expect(recalled.data!.outcome).toBe('compacted');
    recalledCompaction = recalled.data!.compactionId!;
    // Further compactions in the short-id session: several rows in its list.
    for (const keep of [6, 4]) {
      await append(KERN, turns(`m${keep}`, 3));
      const more = await ui.client.POST('/v1/sessions/{sessionId}/compactions', {
        params: { path: { sessionId: KERN } },
        body: { strategy: { type: 'recursive-summarization', maxEventsToKeep: keep, overlapSize: 1 } },
      });
      expect(more.data!.outcome).toBe('compacted');
    }
  }, 120_000);

  // ncui74 F2: with kerning, a run of 100,000 × "A" (also "T", "r") took Chromium's line breaker 8–79 s to lay out
  // (overflow-wrap: anywhere shaped it again at every line); without it, a few milliseconds.
  itInPage('lays out every kind of stored text without kerning, and opens a compaction whose prompt is 100,000 × "A"', async () => {
    const kinds: Record<string, string[]> = {};
    const collect = async () => Object.assign(kinds, await kerningOfStoredText(ui.page));
    // The session list: session ids (and the header's stored bits).
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/`);
    await ui.page.locator(`#sessions tr[data-session="${KERN}"]`).waitFor();
    await collect();
    // The session page: its heading, the timeline's texts, ids and a hidden character's marker; recall hits.
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${KERN}`);
    await ui.page.locator('#timeline li[data-event="u2"] .hidden-char').waitFor();
    await ui.page.locator('#recall input[name=recall]').fill('refund');
    await ui.page.locator('#recall button[type=submit]').click();
    await ui.page.locator('#recall-results li[data-event] mark').first().waitFor();
    await collect();
    const unkerned = () => expect(kinds).toEqual(Object.fromEntries(Object.keys(kinds).map((kind) => [kind, ['none']])));
    unkerned();
    // "Window at revision": a message shown whole by "show all".
    await ui.page.locator('#timeline-goto input[name=revision]').fill('2');
    await ui.page.locator('#timeline-goto button[type=submit]').click();
    await ui.page.locator('#window-at-list li[data-event="a1"] button.show-all').click();
    await waitInPage(ui.page, `[...document.querySelectorAll('#window-at-list .stored')].some((e) => e.textContent.length === ${RUN.length})`, 30_000);
    await collect();
    // A compaction's details: its systemPrompt (100,000 × "A", shown whole), its summary, its diff's previews.
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${KERN}/c/${kernCompaction}`);
    await ui.page.locator(`#diff[data-compaction="${kernCompaction}"] dd.prompt .stored`).first().waitFor();
    expect(
      await ui.page
        .locator('dd.prompt .stored')
        .first()
        .evaluate((el) => el.textContent!.length),
    ).toBe(RUN.length);
    await collect();

    const expected = [
      'h1#session-title.stored',
      'bdi.stored', // ids, names
      'div.stored', // a timeline row's text, a summary
      'span.hidden-char',
      'bdi.preview.stored', // a recall hit's snippet
      'mark',
      'div.preview.stored', // a summary's row, a diff preview
    ];
    for (const kind of expected) expect(Object.keys(kinds)).toContain(kind);
    unkerned();
  });

  // ncui74 F3: the status said "went to revision 6, the first of this life", the panel "Window at revision 1" with a
  // 400 revision_out_of_range (an erased life's windows are not kept), and the console a failed request.
  itInPage('"Go to revision" into an erased earlier life opens the window of the revision gone to, with no failed request', async () => {
    const failed: string[] = [];
    const onResponse = (response: { status(): number; url(): string }) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
    };
    ui.page.on('response', onResponse);
    try {
      await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${REBORN}`);
      await ui.page.locator('#erased-lives').waitFor();
      await ui.page.locator('#timeline-goto input[name=revision]').fill('1');
      await ui.page.locator('#timeline-goto button[type=submit]').click();
      await ui.page.locator('#timeline-goto-status', { hasText: 'revision 1 was erased' }).waitFor();
      expect(await ui.page.locator('#timeline-goto-status').innerText()).toBe(
        'revision 1 was erased (revisions 0–5, an earlier life of this session id): went to revision 6, the first of this life (row 1 of 4)',
      );
      // the window read, or its error shown
      await ui.page.locator('#window-at-list li[data-event], #window-at .error').first().waitFor();
      expect(await ui.page.locator('#window-at-heading').innerText()).toBe('Window at revision 6');
      expect(await ui.page.locator('#window-at-status').innerText()).toMatch(/^Right after revision 6: 1 event/);
      expect(await ui.page.locator('#window-at-list li[data-event]').count()).toBe(1);
      expect(failed).toEqual([]);
      // A revision of this life is still the one asked.
      await ui.page.locator('#timeline-goto input[name=revision]').fill('8');
      await ui.page.locator('#timeline-goto button[type=submit]').click();
      await ui.page.locator('#window-at-heading', { hasText: 'Window at revision 8' }).waitFor();
      expect(failed).toEqual([]);
    } finally {
      ui.page.off('response', onResponse);
    }
  });

  // ncui74 F5: 27 × (W + 21 combining marks) in a tool result (here 25) painted over its row's "#2 … TOOL z3" header and the row
  // above; a stack on one letter reached the row above. What a row's text paints stays inside that text's box.
  itInPage('clips stacked combining marks to their own text: the row’s header and the row above look as without that text', async () => {
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${ZALGO}`);
    await ui.page.locator('#timeline li[data-event="z4"]').waitFor();
    expect(await ui.page.locator('#timeline li[data-event="z3"]').innerText()).toContain(ZALGO_TEXT);
    /** Screenshots of the row's header and the row above it, then the same with the row's text hidden: equal when nothing of the text paints outside it. */
    const unpainted = async (eventId: string, above: string) => {
      const row = ui.page.locator(`#timeline li[data-event="${eventId}"]`);
      await row.scrollIntoViewIfNeeded();
      const parts = [row.locator('.kind'), row.locator(':scope > span.muted').first(), ui.page.locator(`#timeline li[data-event="${above}"]`)];
      const shots = async () => Promise.all(parts.map((part) => part.screenshot()));
      const withText = await shots();
      await row.locator(':scope > .preview').evaluate((el) => ((el as unknown as { style: { visibility: string } }).style.visibility = 'hidden'));
      const withoutText = await shots();
      await row.locator(':scope > .preview').evaluate((el) => ((el as unknown as { style: { visibility: string } }).style.visibility = ''));
      return withText.map((shot, i) => shot.equals(withoutText[i]));
    };
    expect(await unpainted('z3', 'z2')).toEqual([true, true, true]);
    expect(await unpainted('z4', 'z3')).toEqual([true, true, true]);
  });

  // ncui74 F6: from the session list's recall, the focus ended on the other session's H1, far above its compaction's details.
  itInPage('moves the focus to the compaction’s details from a recall hit’s "archived by" link to another session', async () => {
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/`);
    await ui.page.locator('#sessions tbody tr').first().waitFor();
    await ui.page.locator('#recall input[name=recall]').fill('quokkaword');
    await ui.page.locator('#recall button[type=submit]').click();
    const link = ui.page.locator(`#recall-results a.archived-by[href$="/c/${recalledCompaction}"]`).first();
    await link.waitFor();
    await link.click();
    await ui.page.locator(`#diff[data-compaction="${recalledCompaction}"]`).waitFor();
    await waitInPage(ui.page, "document.activeElement?.id === 'diff-heading'");
    expect(await ui.page.title()).toBe(`Compaction ${recalledCompaction.slice(0, 8)}… – Session ${RECALLED} – Session audit`);
    // The link of a session page (no compaction) still focuses the session's heading.
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/`);
    await ui.page.locator('#sessions tbody tr').first().waitFor();
    await ui.page.locator(`#sessions tr[data-session="${RECALLED}"] a`).click();
    await waitInPage(ui.page, "document.activeElement?.id === 'session-title'");
  });

  // ncui74 F7: at 1280 px each id link of the Compactions panel read "1a3" / "d4e" / "4a…" on three lines.
  itInPage('keeps each compaction’s short id on one line in the compaction list at 1280 px, the list fitting its panel', async () => {
    await ui.page.setViewportSize({ width: 1280, height: 900 });
    try {
      await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${KERN}`);
      await ui.page.locator('#compactions a.open').first().waitFor();
      const lines = await ui.page.locator('#compactions a.open').evaluateAll((links) => links.map((a) => a.getClientRects().length));
      expect(lines).toEqual([1, 1, 1]);
      const past = await ui.page.locator('#compactions').evaluate((el) => {
        const panel = el.closest('.panel')!;
        return panel.scrollWidth - panel.clientWidth;
      });
      expect(past).toBeLessThanOrEqual(0);
    } finally {
      await ui.page.setViewportSize(PAGE_VIEWPORT);
    }
  });
});
