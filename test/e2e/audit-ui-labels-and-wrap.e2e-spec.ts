/**
 * The audit page at `/ui` (playwright-core driving Debian's Chromium, as in audit-ui.e2e-spec.ts;
 * docs/audit-page-and-client.md) on display nits a probe found (newcomer ncaudit72 F3, F5–F8):
 *  - a late answer archived on arrival says so on its timeline row, not only "archived by";
 *  - a pass that saved 0 because its summary made the window larger says by how much it grew;
 *  - a summary that replaces an earlier one is labelled with the events it covers and the summary
 *    it replaces, as its text counts them;
 *  - long unbroken values (a 256-character user id, a 5,000-character word in a summary, a
 *    200-character model name, large figures beside `recursive-summarization`) wrap: no panel or
 *    box scrolls sideways;
 *  - the empty "Window at a revision" and recall hits lists are no Tab stops;
 *  - "Go to revision" refuses a revision not written in digits (`1e3`), naming it as typed.
 * A scripted summarizer names a long model and keeps a long word it is given. Open mode; one service.
 */
import type { Page } from 'playwright-core';
import type { SummaryRequest } from '@lib/compaction';
import type { Summarizer, SummarizerOutcome } from '@lib/session';
import { describeWithChromium, PAGE_VIEWPORT } from '../support/chromium';
import { useAuditPage } from '../support/audit-page';

/** A word of 5,000 characters: a summary of an event holding it holds it too. */
const LONG_WORD = `W${'w'.repeat(4999)}`;
/** A model name of 200 characters without a break (the service keeps 200). */
const LONG_MODEL = `m${'0'.repeat(199)}`;

/** Summarizes as `summary of N earlier events` (N: the events, not the summaries it merges), with {@link LONG_WORD} when one of them holds it. */
class WordKeepingSummarizer implements Summarizer {
  readonly identity = { kind: 'openai-compatible' as const, model: 'gpt-test' };
  summarize(request: SummaryRequest): Promise<SummarizerOutcome> {
    const word = request.toSummarize.some((t) => t.includes(LONG_WORD)) ? ` ${LONG_WORD}` : '';
    const text = `summary of ${request.toSummarize.length} earlier events${word}`;
    return Promise.resolve({
      ok: true,
      text,
      calls: 1,
      promptTokens: 10,
      completionTokens: 5,
      retries: 0,
      unreportedUsageCalls: 0,
      answeredModels: [LONG_MODEL],
    });
  }
}

const LATE = 'late-answer';
const LONG_USER = 'U'.repeat(256);
const WRAP = 'wrap-long';
const GROW = 'grow-window';

/**
 * How far the first element of `selector` (or, with `panel`, the panel holding it) scrolls sideways, its scroll width past its
 * client width (0: its content fits), with the selector for the failure's message.
 */
const overflow = async (page: Page, selector: string, panel = false) => ({
  selector: `${selector}${panel ? ' (its panel)' : ''}`,
  past: await page
    .locator(selector)
    .first()
    .evaluate((el, outer) => {
      const box = outer ? el.closest('.panel')! : el;
      return Math.max(0, box.scrollWidth - box.clientWidth);
    }, panel),
});

describeWithChromium('audit page: on-arrival rows, summary labels, long values, empty lists, revisions typed', () => {
  const ui = useAuditPage({ summarizer: new WordKeepingSummarizer() });
  const { itInPage } = ui;
  let lateCompaction = '';
  let growCompaction = '';
  /** The wrap session's compactions, oldest first: the second replaces the first's summary. */
  const wrapCompactions: string[] = [];

  beforeAll(async () => {
    const late = { sessionId: LATE };
    await ui.client.POST('/v1/sessions/{sessionId}/events', {
      params: { path: late },
      body: {
        events: [
          { id: 's1', type: 'system', text: 'sys' },
          { id: 'u1', type: 'user', text: 'look up order 12345' },
          { id: 'c1', type: 'assistant', text: null, toolCalls: [{ id: 'call_a', name: 'lookup', arguments: '{"order":"12345"}' }] },
          { id: 'u2', type: 'user', text: 'never mind, anything else?' },
          { id: 'a2', type: 'assistant', text: 'Sure.' },
          { id: 'u3', type: 'user', text: 'ok thanks' },
          { id: 'a3', type: 'assistant', text: 'Bye.' },
        ],
      },
    });
    const { data } = await ui.client.POST('/v1/sessions/{sessionId}/compactions', {
      params: { path: late },
      body: { strategy: { type: 'sliding-window', maxEvents: 2 } },
    });
    expect(data!.outcome).toBe('compacted');
    lateCompaction = data!.compactionId!;
    await ui.client.POST('/v1/sessions/{sessionId}/events', {
      params: { path: late },
      body: { events: [{ id: 't1', type: 'tool', responses: [{ toolCallId: 'call_a', name: 'lookup', data: '{"status":"shipped"}' }] }] },
    });
    await ui.client.POST('/v1/sessions/{sessionId}/events', { params: { path: late }, body: { events: [{ id: 'u4', type: 'user', text: 'one more' }] } });

    // Large turns (five-digit token figures in the compaction list), a long word, a long user id; two summarizing passes.
    const wrap = { sessionId: WRAP };
    const big = 'many words of a long turn '.repeat(150);
    for (const round of [1, 2]) {
      const events = Array.from({ length: 12 }, (_, i) => ({
        type: i % 2 ? 'assistant' : 'user',
        text: round === 1 && i === 1 ? `a word: ${LONG_WORD}` : `${big} ${round}.${i}`,
      }));
      const appended = await ui.client.POST('/v1/sessions/{sessionId}/events', {
        params: { path: wrap },
        body: { userId: LONG_USER, events: events as never },
      });
      expect(appended.response.status).toBe(201);
      const { data: pass } = await ui.client.POST('/v1/sessions/{sessionId}/compactions', {
        params: { path: wrap },
        body: { strategy: { type: 'recursive-summarization', maxEventsToKeep: 2 } },
      });
      expect(pass!.outcome).toBe('compacted');
      wrapCompactions.push(pass!.compactionId!);
    }
    // Four tiny events: the summary of two (its shadow prompt included) costs more than they did.
    const grow = { sessionId: GROW };
    const tiny = ['hi', 'hello', 'ok', 'fine'].map((text, i) => ({ type: i % 2 ? 'assistant' : 'user', text }));
    await ui.client.POST('/v1/sessions/{sessionId}/events', { params: { path: grow }, body: { events: tiny as never } });
    const { data: grown } = await ui.client.POST('/v1/sessions/{sessionId}/compactions', {
      params: { path: grow },
      body: { strategy: { type: 'recursive-summarization', maxEventsToKeep: 2 } },
    });
    expect(grown!.outcome).toBe('compacted');
    growCompaction = grown!.compactionId!;
  }, 120_000);

  // ncaudit72 F4: "saved 0" for a pass that made the window larger, nothing saying it grew.
  itInPage('says by how much a pass that saved 0 made the window grow', async () => {
    const { data: item } = await ui.client.GET('/v1/sessions/{sessionId}/compactions/{compactionId}', {
      params: { path: { sessionId: GROW, compactionId: growCompaction } },
    });
    expect(item!.tokensAfter).toBeGreaterThan(item!.tokensBefore);
    expect(item!.tokensSaved).toBe(0);
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${GROW}/c/${growCompaction}`);
    await ui.page.locator('#saved').waitFor();
    expect(await ui.page.locator('#saved').innerText()).toBe(
      `0 cl100k_base (the window grew by ${item!.tokensAfter - item!.tokensBefore}: the summary costs more than what it archived)`,
    );
  });

  // ncaudit72 F3: the row read "archived by 7ba33b7d…" only, as if archived by a pass recorded before it.
  itInPage('says on a late answer’s timeline row that it was archived on arrival, and when', async () => {
    const { data: item } = await ui.client.GET('/v1/sessions/{sessionId}/compactions/{compactionId}', {
      params: { path: { sessionId: LATE, compactionId: lateCompaction } },
    });
    const arrival = item!.archivedOnArrival.find((a) => a.eventId === 't1')!;
    expect(arrival).toBeDefined();
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${LATE}`);
    const row = ui.page.locator('#timeline li[data-event="t1"]');
    await row.waitFor();
    expect(await row.innerText()).toContain(
      `archived by ${lateCompaction.slice(0, 8)}… on arrival, at revision ${arrival.revision}: a late answer to a call that compaction had archived`,
    );
    // The events the pass archived itself carry no such note.
    expect(await ui.page.locator('#timeline li[data-event="c1"] .on-arrival-note').count()).toBe(0);
  });

  // ncaudit72 F5: "covers 13 events" above "… of 12 earlier events": the count held the replaced summary.
  itInPage('labels a summary that replaces an earlier one with the events it covers and the summary it replaces', async () => {
    const read = (compactionId: string) =>
      ui.client.GET('/v1/sessions/{sessionId}/compactions/{compactionId}', { params: { path: { sessionId: WRAP, compactionId } } });
    const first = (await read(wrapCompactions[0])).data!;
    const second = (await read(wrapCompactions[1])).data!;
    expect(second.summary!.coveredIds).toContain(first.summary!.id);
    const events = second.summary!.coveredIds.length - 1;
    expect(second.summary!.text).toMatch(new RegExp(`^summary of ${events} earlier events`));
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${WRAP}/c/${wrapCompactions[1]}`);
    await ui.page.locator('#summary-label').waitFor();
    expect(await ui.page.locator('#summary-label').innerText()).toBe(`Summary ${second.summary!.id} (covers ${events} events and the summary it replaces):`);
    // The first pass replaced none: its label as before.
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${WRAP}/c/${wrapCompactions[0]}`);
    await ui.page.locator(`#diff[data-compaction="${wrapCompactions[0]}"] #summary-label`).waitFor();
    expect(await ui.page.locator('#summary-label').innerText()).toBe(`Summary ${first.summary!.id} (covers ${first.summary!.coveredIds.length} events):`);
  });

  // ncaudit72 F6: a 256-character user id, a 5,000-character word in a summary, a 200-character model name and a list row
  // of five-digit figures beside recursive-summarization did not wrap: their panels scrolled sideways.
  itInPage('wraps long unbroken values: the session facts, a summary, a model name and the compaction list scroll no panel sideways', async () => {
    await ui.page.setViewportSize({ width: 1280, height: 900 });
    try {
      await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${WRAP}/c/${wrapCompactions[0]}`);
      await ui.page.locator('#summary-text').waitFor();
      expect(await ui.page.locator('#summary-text').innerText()).toContain(LONG_WORD);
      expect(await ui.page.locator('#answered-models').innerText()).toBe(LONG_MODEL);
      expect(await ui.page.locator('dl.facts').first().innerText()).toContain(LONG_USER);
      const boxes = [
        await overflow(ui.page, 'dl.facts'), // the session's facts, the user id
        await overflow(ui.page, 'dl.facts', true),
        await overflow(ui.page, '#summary-text'),
        await overflow(ui.page, '#answered-models', true), // the details panel
        await overflow(ui.page, '#compactions', true), // the compaction list, at 1280 px
      ];
      expect(boxes).toEqual(boxes.map(({ selector }) => ({ selector, past: 0 })));
    } finally {
      await ui.page.setViewportSize(PAGE_VIEWPORT);
    }
  });

  // ncrecheck72 F1: a 250-character event id (ids may have 256) scrolled the timeline, the compaction's diff, the window at
  // a revision and the recall hits sideways (all show ids as .stored text; the recall hits are not measured here).
  itInPage('wraps a long event id: the timeline, the compaction diff, and the window at a revision scroll no panel sideways', async () => {
    const sessionId = 'long-event-id';
    const longId = 'i'.repeat(250);
    await ui.client.POST('/v1/sessions/{sessionId}/events', {
      params: { path: { sessionId } },
      body: {
        events: [
          { id: longId, type: 'system', text: 'sys' },
          { id: 'u1', type: 'user', text: 'hello' },
          { id: 'a1', type: 'assistant', text: 'x' },
          { id: 'u2', type: 'user', text: 'more' },
          { id: 'a2', type: 'assistant', text: 'ok' },
        ],
      },
    });
    const { data } = await ui.client.POST('/v1/sessions/{sessionId}/compactions', {
      params: { path: { sessionId } },
      body: { strategy: { type: 'recursive-summarization', maxEventsToKeep: 2 } },
    });
    expect(data!.outcome).toBe('compacted');
    await ui.page.setViewportSize({ width: 1280, height: 900 });
    try {
      await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${sessionId}`);
      await ui.page.locator('#timeline li').first().waitFor();
      expect(await ui.page.locator('#timeline').innerText()).toContain(longId);
      const boxes = [await overflow(ui.page, '#timeline')];
      await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${sessionId}/c/${data!.compactionId}`);
      await ui.page.locator(`#diff[data-compaction="${data!.compactionId}"] #summary-label`).waitFor();
      boxes.push(await overflow(ui.page, '#diff'));
      await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${sessionId}/r/0`);
      await ui.page.locator('#window-at-list li').first().waitFor();
      boxes.push(await overflow(ui.page, '#window-at-list'));
      expect(boxes).toEqual(boxes.map(({ selector }) => ({ selector, past: 0 })));
    } finally {
      await ui.page.setViewportSize(PAGE_VIEWPORT);
    }
  });

  // ncaudit72 F7: before a revision was chosen, and before a search, the lists were Tab stops showing nothing.
  itInPage('makes the empty "Window at a revision" and recall hits lists no Tab stops, and each one once it shows something', async () => {
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${LATE}`);
    await ui.page.locator('#timeline li').first().waitFor();
    const tabIndex = (selector: string) => ui.page.locator(selector).evaluate((el) => (el as unknown as { tabIndex: number }).tabIndex);
    expect(await tabIndex('#window-at-list')).toBe(-1);
    expect(await tabIndex('#recall-results')).toBe(-1);
    await ui.page.locator('#timeline-goto input[name=revision]').fill('3');
    await ui.page.locator('#timeline-goto button[type=submit]').click();
    await ui.page.locator('#window-at-list li').first().waitFor();
    expect(await tabIndex('#window-at-list')).toBe(0);
    await ui.page.locator('#window-at-close').click();
    expect(await tabIndex('#window-at-list')).toBe(-1);
    await ui.page.locator('#recall input[name=recall]').fill('nothing like this here');
    await ui.page.locator('#recall button[type=submit]').click();
    await ui.page.locator('#recall-status', { hasText: 'no hit' }).waitFor();
    expect(await tabIndex('#recall-results')).toBe(-1);
    await ui.page.locator('#recall input[name=recall]').fill('order');
    await ui.page.locator('#recall button[type=submit]').click();
    await ui.page.locator('#recall-results li[data-event]').first().waitFor();
    expect(await tabIndex('#recall-results')).toBe(0);
  });

  // ncaudit72 F8: "1e3" went to "revision 1000", not named as typed.
  itInPage('refuses a revision not written in digits, naming it as typed, and marks no row', async () => {
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${LATE}`);
    await ui.page.locator('#timeline li').first().waitFor();
    await ui.page.locator('#timeline-goto input[name=revision]').fill('1e3');
    await ui.page.locator('#timeline-goto button[type=submit]').click();
    await ui.page.locator('#timeline-goto-status', { hasText: 'is not a revision' }).waitFor();
    expect(await ui.page.locator('#timeline-goto-status').innerText()).toBe(
      '1e3 is not a revision: a revision is a whole number from 0, in digits (type 1000); no row marked',
    );
    expect(await ui.page.locator('#timeline li.target').count()).toBe(0);
    expect(await ui.page.locator('#window-at-list li').count()).toBe(0);
  });
});
