/**
 * The audit page at `/ui` with the keyboard only and as a screen reader reads it (playwright-core
 * driving Debian's Chromium; Tab, Shift+Tab, Enter, Space and Escape; the accessibility tree read
 * through the Chrome DevTools Protocol and aria snapshots). README "Audit page and typed client",
 * keyboard and screen readers:
 *  - each compaction of the list and each mark on the chart is a link: Enter opens its details,
 *    whose heading takes the focus; Close or Escape closes them and gives the focus back;
 *  - "More hits" and "Load more" keep the focus (on the button, or on the first new hit or row
 *    when the button goes), and the counts beside them are live regions;
 *  - "Go to revision" and "Go to time" focus the row gone to (`aria-current="location"`) and say
 *    which; a revision past the end says so and marks no row;
 *  - opening a session names it in the document title and focuses its heading;
 *  - grey text on archived rows has a contrast of at least 4.5:1.
 * Open mode; one service. Runs in about 30 s.
 */
import type { Browser, Page } from 'playwright-core';
import type { SessionServiceClient } from '@lib/client';
import { startListeningService, type ClientHarness } from '../support/client-harness';
import { describeWithChromium, launchChromiumPage, PAGE_VIEWPORT, waitInPage } from '../support/chromium';

const SESSION = 'kb-audit';
/** Events of {@link SESSION} (and a system message): more than one timeline page of 200 rows. */
const EVENTS = 260;
/** A word in every event of {@link SESSION} (recall: many pages of hits). */
const EVERYWHERE = 'okapi';
/** A word in the first {@link FEW} events only (recall: two pages, the second the last). */
const FEW_WORD = 'zebu';
const FEW = 25;
/** A session compacted by summarizing strategies (the widest strategy names in the compaction list). */
const SUMMARIZED = 'kb-summarized';
/** A user with more sessions than one page of the list (100). */
const MANY_USER = 'kb-many';

/** One accessibility-tree node of the page, as Chromium exposes it to screen readers. */
interface AxNode {
  role: string;
  name: string;
  description: string;
  properties: Record<string, unknown>;
}

/**
 * The accessibility-tree node of the first element matching `selector`, or of the focused element
 * when `selector` is `:focus` (Chromium's own tree, through the DevTools Protocol).
 */
async function ax(page: Page, selector: string): Promise<AxNode> {
  const cdp = await page.context().newCDPSession(page);
  try {
    const { root } = (await cdp.send('DOM.getDocument', { depth: 0 })) as { root: { nodeId: number } };
    const found =
      selector === ':focus' ? await page.evaluate<string>("document.activeElement?.setAttribute('data-ax-probe', ''), '[data-ax-probe]'") : selector;
    const { nodeId } = await cdp.send('DOM.querySelector', { nodeId: root.nodeId, selector: found });
    if (!nodeId) throw new Error(`no element ${selector}`);
    const { nodes } = (await cdp.send('Accessibility.getPartialAXTree', { nodeId, fetchRelatives: false })) as {
      nodes: Array<{
        role?: { value: string };
        name?: { value: string };
        description?: { value: string };
        properties?: Array<{ name: string; value: { value: unknown } }>;
      }>;
    };
    const node = nodes[0];
    return {
      role: String(node.role?.value ?? ''),
      name: String(node.name?.value ?? ''),
      description: String(node.description?.value ?? ''),
      properties: Object.fromEntries((node.properties ?? []).map((p) => [p.name, p.value.value])),
    };
  } finally {
    await page.evaluate("document.querySelector('[data-ax-probe]')?.removeAttribute('data-ax-probe')");
    await cdp.detach();
  }
}

/** The focused element: its tag, id and a few attributes. */
function focused(page: Page): Promise<{ tag: string; id: string; ariaCurrent: string | null; inside: string[] }> {
  return page.evaluate(`(() => {
    const e = document.activeElement;
    const inside = ['#compactions', '#diff-slot', '#chart', '#recall-results', '#sessions tbody', '#timeline'].filter((s) => e.closest(s));
    return { tag: e.tagName, id: e.id, ariaCurrent: e.getAttribute('aria-current'), inside };
  })()`);
}

/** The focused element's text. */
const focusedText = (page: Page): Promise<string> => page.evaluate<string>('document.activeElement.textContent');

/**
 * In the page: the contrast ratios (WCAG 2: (L1 + 0.05) / (L2 + 0.05) of relative luminances) of
 * the grey texts (`.muted`, `.kind`) of the timeline's first archived row against the background
 * they are drawn on (the nearest ancestor's that is not transparent), from computed styles.
 */
const CONTRASTS = `(() => {
  const rgb = (s) => s.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const channel = (c) => ((c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  const lum = ([r, g, b]) => 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
  const background = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = getComputedStyle(e).backgroundColor;
      if (c !== 'transparent' && !/, 0\\)$/.test(c)) return c;
    }
    return 'rgb(255, 255, 255)';
  };
  const row = document.querySelector('#timeline li.archived');
  return [...row.querySelectorAll('.muted, .kind')].map((el) => {
    const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(rgb(background(el)))];
    return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  });
})()`;

describeWithChromium('audit page with the keyboard and a screen reader', () => {
  let harness: ClientHarness;
  let client: SessionServiceClient;
  let browser: Browser;
  let page: Page;
  const compactionIds: string[] = [];

  beforeAll(async () => {
    harness = await startListeningService();
    client = harness.client();
    const path = { sessionId: SESSION };
    const events: Array<{ id: string; type: 'system' | 'user' | 'assistant'; text: string }> = [{ id: 'e0', type: 'system', text: 'You are a test agent.' }];
    for (let i = 1; i <= EVENTS; i++)
      events.push({
        id: `e${i}`,
        type: i % 2 ? 'user' : 'assistant',
        text: `${i % 2 ? 'question' : 'answer'} ${i} ${EVERYWHERE}${i <= FEW ? ` ${FEW_WORD}` : ''}`,
      });
    const half = EVENTS / 2;
    for (const part of [events.slice(0, half), events.slice(half)]) {
      const appended = await client.POST('/v1/sessions/{sessionId}/events', { params: { path }, body: { userId: 'kb-user', events: part } as never });
      expect(appended.response.status).toBe(201);
      const { data } = await client.POST('/v1/sessions/{sessionId}/compactions', {
        params: { path },
        body: { strategy: { type: 'sliding-window', maxEvents: 40 } },
      });
      expect(data!.outcome).toBe('compacted');
      compactionIds.push(data!.compactionId!);
    }
    for (const strategy of [
      { type: 'recursive-summarization', maxEventsToKeep: 4 },
      { type: 'rolling-summary', keepTurns: 2, summarizeAtTokens: 20 },
      { type: 'recursive-summarization', maxEventsToKeep: 4 },
    ] as const) {
      const turns = Array.from({ length: 12 }, (_, i) => ({ type: i % 2 ? ('assistant' as const) : ('user' as const), text: `turn ${i} of a long talk` }));
      await client.POST('/v1/sessions/{sessionId}/events', { params: { path: { sessionId: SUMMARIZED } }, body: { events: turns } });
      const { data } = await client.POST('/v1/sessions/{sessionId}/compactions', { params: { path: { sessionId: SUMMARIZED } }, body: { strategy } });
      expect(data!.outcome).toBe('compacted');
    }
    for (let i = 0; i <= 100; i++)
      await client.POST('/v1/sessions/{sessionId}/events', {
        params: { path: { sessionId: `kb-many-${String(i).padStart(3, '0')}` } },
        body: { userId: MANY_USER, events: [{ type: 'user', text: 'hi' }] },
      });
    // Recall reads a projection: wait until it has every hit of the few-word search.
    for (let tries = 0; ; tries++) {
      const { data } = await client.GET('/v1/recall', { params: { query: { q: FEW_WORD, sessionId: SESSION, limit: 100 } } });
      if (data!.items.length === FEW) break;
      if (tries > 100) throw new Error(`recall found ${data!.items.length} of ${FEW} hits`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    ({ browser, page } = await launchChromiumPage());
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await harness?.stop();
  });

  /** Opens the session page (a fresh load: the browser's focus starts at the top). */
  const openSession = async () => {
    await page.goto(`${harness.baseUrl}/ui#/s/${SESSION}`);
    await page.locator('#compactions tbody tr').first().waitFor();
  };

  // nca11y F1, F5, A2: rows were <tr onclick> and the chart's marks SVG lines with a click listener only.
  it('opens a compaction of the list with Enter, focuses its details, and Escape or Close gives the focus back', async () => {
    await openSession();
    // Tab from the panel's heading: every stop in the list is a link to a compaction, named with its full id.
    await page.locator('h2', { hasText: 'Compactions (' }).click();
    await page.keyboard.press('Tab');
    expect((await focused(page)).inside).toContain('#compactions');
    const link = await ax(page, ':focus');
    expect(link.role).toBe('link');
    expect(link.name).toBe(`compaction #1 ${compactionIds[0]}`);
    await page.keyboard.press('Tab');
    expect(await ax(page, ':focus')).toMatchObject({ role: 'link', name: `compaction #2 ${compactionIds[1]}` });

    await page.keyboard.press('Enter');
    await page.locator(`#diff[data-compaction="${compactionIds[1]}"]`).waitFor();
    await waitInPage(page, "document.activeElement?.id === 'diff-heading'");
    const heading = await ax(page, ':focus');
    expect(heading.role).toBe('heading');
    expect(heading.name).toBe(`Compaction ${compactionIds[1]}`);
    await waitInPage(page, "/details opened/.test(document.querySelector('#announce')?.textContent ?? '')");
    expect((await ax(page, '#announce')).properties.live).toBe('polite');

    await page.keyboard.press('Escape');
    await page.locator('#diff').waitFor({ state: 'detached' });
    await waitInPage(page, "document.activeElement?.closest('#compactions') !== null");
    expect(await ax(page, ':focus')).toMatchObject({ role: 'link', name: `compaction #2 ${compactionIds[1]}` });

    // Again, closed with its Close button (Space on it): the next Tab stop after the heading.
    await page.keyboard.press('Enter');
    await waitInPage(page, "document.activeElement?.id === 'diff-heading'");
    await page.keyboard.press('Tab');
    expect(await ax(page, ':focus')).toMatchObject({ role: 'button', name: 'Close' });
    await page.keyboard.press('Space');
    await page.locator('#diff').waitFor({ state: 'detached' });
    await waitInPage(page, "document.activeElement?.closest('#compactions') !== null");
    expect(await ax(page, ':focus')).toMatchObject({ role: 'link', name: `compaction #2 ${compactionIds[1]}` });
  });

  it('reaches each mark on the chart by Tab and opens it with Enter; the chart has a text alternative', async () => {
    await openSession();
    await page.locator('#chart-estimator').focus();
    await page.keyboard.press('Tab');
    expect((await focused(page)).inside).toContain('#chart');
    const mark = await ax(page, ':focus');
    expect(mark.role).toBe('link');
    expect(mark.name).toMatch(new RegExp(`^compaction #1 compacted ${compactionIds[0]} at revision \\d+: `));
    await page.keyboard.press('Tab');
    expect((await ax(page, ':focus')).name).toMatch(new RegExp(`^compaction #2 compacted ${compactionIds[1]}`));
    await page.keyboard.press('Enter');
    await page.locator(`#diff[data-compaction="${compactionIds[1]}"]`).waitFor();
    await waitInPage(page, "document.activeElement?.id === 'diff-heading'");
    const chart = await ax(page, '#chart svg');
    expect(chart.name).toMatch(/^window size \(\w+\) over revisions$/);
    expect(chart.description).toMatch(/^Window size in \w+: [\d,]+ tokens at revision \d+, .*2 compactions, each a link on the chart/);
  });

  // nca11y F2, F3: the buttons were disabled while their page was read, which sent the focus to <body>.
  it('keeps the focus on "More hits" while more follow, moves it to the first new hit when none do, and announces the count', async () => {
    await openSession();
    const input = page.locator('#recall input[name=recall]');
    expect((await ax(page, '#recall input[name=recall]')).name).toBe('Words to find (archived events included)');
    expect((await ax(page, '#recall-results')).name).toBe('Recall hits');
    const status = await ax(page, '#recall-status');
    expect(status.role).toBe('status');
    expect(status.properties.live).toBe('polite');

    await input.focus();
    await page.keyboard.type(EVERYWHERE);
    await page.keyboard.press('Enter');
    await page.locator('#recall-status', { hasText: '20 hits shown; more follow' }).waitFor();
    await page.locator('#recall-more').focus();
    await page.keyboard.press('Enter');
    await page.locator('#recall-status', { hasText: '40 hits shown; more follow' }).waitFor();
    expect((await focused(page)).id).toBe('recall-more');

    await input.fill('');
    await input.focus();
    await page.keyboard.type(FEW_WORD);
    await page.keyboard.press('Enter');
    await page.locator('#recall-status', { hasText: '20 hits shown; more follow' }).waitFor();
    await page.locator('#recall-more').focus();
    await page.keyboard.press('Enter');
    await page.locator('#recall-status', { hasText: `${FEW} hits, all shown` }).waitFor();
    expect(await page.locator('#recall-more').isHidden()).toBe(true);
    const hit = await page.evaluate(`(() => {
      const e = document.activeElement;
      return { tag: e.tagName, index: [...e.parentElement.children].indexOf(e), list: e.parentElement.id };
    })()`);
    expect(hit).toEqual({ tag: 'LI', index: 20, list: 'recall-results' });
    expect((await ax(page, ':focus')).role).toBe('listitem');
  });

  it('keeps the focus on "Load more" of the list: on the first new row when it was the last page; the count is a live region that waits for typing to pause', async () => {
    await page.goto(`${harness.baseUrl}/ui#/?user=${MANY_USER}`);
    await page.locator('#more:not([hidden])').waitFor();
    expect((await ax(page, 'input[name=search]')).name).toBe('Session id contains');
    expect((await ax(page, 'input[name=userId]')).name).toBe('User id (exact)');
    const count = await ax(page, '#session-count');
    expect(count.role).toBe('status');
    expect(count.properties.live).toBe('polite');

    await page.locator('#more').focus();
    await page.keyboard.press('Enter');
    await page.locator('#session-count', { hasText: '101 loaded, all listed' }).waitFor();
    await waitInPage(page, "document.activeElement?.tagName === 'TR'");
    expect(await page.evaluate("document.activeElement.getAttribute('data-session')")).toBe('kb-many-000');
    expect((await ax(page, ':focus')).role).toBe('row');

    // Typing in the search text: the table and count change at once, the count is said when typing pauses.
    await page.locator('input[name=search]').focus();
    await page.keyboard.type('kb-many-09');
    expect(await page.locator('#session-count').getAttribute('aria-live')).toBe('off');
    expect(await page.locator('#session-count').innerText()).toBe('10 of 101 loaded match, all listed');
    await waitInPage(page, "!document.querySelector('#session-count').hasAttribute('aria-live')");
    expect((await ax(page, '#session-count')).properties.live).toBe('polite');
  });

  // nca11y F4: the row gone to had only a CSS outline, and a revision past the end outlined the last row.
  it('focuses the row "Go to revision" and "Go to time" go to, marks it aria-current and says which; past the end marks none', async () => {
    await openSession();
    await page.locator('#timeline-goto input[name=revision]').focus();
    await page.keyboard.type('230');
    await page.keyboard.press('Enter');
    await page.locator('#timeline-goto-status', { hasText: 'went to revision 230' }).waitFor();
    const row = await focused(page);
    expect(row).toMatchObject({ tag: 'LI', ariaCurrent: 'location', inside: ['#timeline'] });
    expect(await focusedText(page)).toMatch(/^#230 /);
    expect((await ax(page, ':focus')).role).toBe('listitem');
    expect((await ax(page, '#timeline-goto-status')).properties.live).toBe('polite');

    await page.locator('#timeline-goto input[name=revision]').fill('99999');
    await page.locator('#timeline-goto input[name=revision]').press('Enter');
    await page.locator('#timeline-goto-status', { hasText: 'revision 99999 is past the end of this timeline' }).waitFor();
    expect(await page.locator('#timeline li.target, #timeline li[aria-current=location]').count()).toBe(0);

    await page.locator('#timeline-goto-time input[name=time]').fill(new Date(Date.now() + 60_000).toISOString());
    await page.locator('#timeline-goto-time input[name=time]').press('Enter');
    await waitInPage(page, "document.activeElement?.matches('#timeline li.target[aria-current=location]')");
    const last = await page.locator('#timeline-time-status').innerText();
    expect(await focusedText(page)).toContain(`#${/revision (\d+)/.exec(last)![1]} `);
  });

  // nca11y F6: focus stayed on <body> and the title said "Session audit" for every page.
  it('names the opened session in the document title and moves the focus to its heading', async () => {
    await page.goto(`${harness.baseUrl}/ui#/?user=kb-user`);
    await page.locator(`#sessions tr[data-session="${SESSION}"]`).waitFor();
    expect(await page.title()).toBe('Sessions – Session audit');
    await page.locator(`#sessions tr[data-session="${SESSION}"] a`).focus();
    await page.keyboard.press('Enter');
    await page.locator('#timeline').waitFor();
    await waitInPage(page, "document.activeElement?.id === 'session-title'");
    expect(await page.title()).toBe(`Session ${SESSION} – Session audit`);
    expect(await ax(page, ':focus')).toMatchObject({ role: 'heading', name: SESSION });
    await page.locator(`#compactions tr[data-compaction="${compactionIds[0]}"] a`).press('Enter');
    await waitInPage(page, "document.activeElement?.id === 'diff-heading'");
    expect(await page.title()).toBe(`Compaction ${compactionIds[0].slice(0, 8)}… – Session ${SESSION} – Session audit`);
  });

  // nca11y A5: at 1280 px the list scrolled sideways, its "at" column cut to "2026-12-0…";
  // ncaudit2 A1: with recursive-summarization rows the "at" column still spilled 22 px past the panel.
  it('fits the compaction list, its "at" column whole, in a 1280 px wide window (also with summarizing strategies)', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    try {
      for (const sessionId of [SESSION, SUMMARIZED]) {
        await page.goto(`${harness.baseUrl}/ui#/s/${sessionId}`);
        await page.locator('#compactions tbody tr').first().waitFor();
        const fit = await page.evaluate<{ panel: number; content: number; table: number; atRight: number; panelRight: number }>(`(() => {
          const panel = document.querySelector('section[aria-labelledby=compactions-heading]');
          const table = document.querySelector('#compactions');
          // every row's "at" cell, the widest strategy name included
          const atRight = Math.max(...[...document.querySelectorAll('#compactions tr > :last-child')].map((c) => c.getBoundingClientRect().right));
          return { panel: panel.clientWidth, content: panel.scrollWidth, table: table.getBoundingClientRect().right, atRight, panelRight: panel.getBoundingClientRect().right };
        })()`);
        expect(fit.content).toBeLessThanOrEqual(fit.panel);
        expect(fit.atRight).toBeLessThanOrEqual(fit.panelRight);
        expect(fit.table).toBeLessThanOrEqual(fit.panelRight);
      }
    } finally {
      await page.setViewportSize(PAGE_VIEWPORT);
    }
  });

  // nca11y F7: #6b7384 on the archived rows' #fdecea was 4.16:1.
  it('writes the grey text of archived rows at a contrast of at least 4.5:1 (WCAG AA)', async () => {
    await openSession();
    const ratios = await page.evaluate<number[]>(CONTRASTS);
    expect(ratios.length).toBeGreaterThanOrEqual(3);
    for (const ratio of ratios) expect(ratio).toBeGreaterThanOrEqual(4.5);
  });
});
