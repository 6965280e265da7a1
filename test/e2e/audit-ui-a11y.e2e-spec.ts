/**
 * The audit page at `/ui` with the keyboard only and as a screen reader reads it (playwright-core
 * driving Debian's Chromium; Tab, Shift+Tab, Enter, Space and Escape; the accessibility tree read
 * through the Chrome DevTools Protocol and aria snapshots). README "Audit page and typed client",
 * keyboard and screen readers:
 *  - "Skip to content" is the first Tab stop, a session page's skip links to Compactions, Recall
 *    and an open "Window at revision" the next; the focus ring is a solid 3 px line at 3:1 or more;
 *  - the timeline is one Tab stop (a roving tabindex over its rows): the arrow keys, Page Up/Down,
 *    Home and End move between rows across its pages, Enter or Space opens a row's compaction, Tab
 *    goes through the row's links and then leaves it; a row says so when the focus enters it;
 *  - each compaction of the list and each mark on the chart is a link (the chart's marks one Tab
 *    stop, the arrow keys moving between them): Enter opens its details, whose heading takes the
 *    focus; Close or Escape closes them and gives the focus back, also to an "archived by" link of
 *    a timeline page that turned meanwhile;
 *  - "archived by" links are named with their visible words first; the chart's estimator has a label;
 *  - a commanded compaction's details say who asked (requestedBy); its summary is a named region;
 *  - reading a session is announced once, when done (its progress line is not a live region);
 *  - the loading mark stands still when reduced motion is asked for;
 *  - "More hits" and "Load more" keep the focus (on the button, or on the first new hit or row
 *    when the button goes), and the counts beside them are live regions;
 *  - "Go to revision" and "Go to time" focus the row gone to (`aria-current="location"`) and say
 *    which; a revision past the end says so and marks no row;
 *  - opening a session names it in the document title and focuses its heading;
 *  - grey text on archived rows has a contrast of at least 4.5:1.
 * Open mode; one service. Runs in about 30 s.
 */
import type { Page } from 'playwright-core';
import { describeWithChromium, PAGE_VIEWPORT, waitInPage } from '../support/chromium';
import { useAuditPage } from '../support/audit-page';

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
/** A session of more log entries than one page of the log's reads (1,000): read in two pages. */
const LONG = 'kb-long';
const LONG_EVENTS = 1_100;
/** The X-Request-Id the second compaction of {@link SESSION} is sent with. */
const TICKET = 'kb-ticket-4711';

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

/**
 * In the page: the focused element's focus ring, from computed styles: its outline's style and
 * width (px), and its colour's contrast ratio (WCAG 2) against the background it is drawn on (the
 * nearest ancestor's that is not transparent, the element's own excluded: the ring lies outside it).
 */
const FOCUS_RING = `(() => {
  const rgb = (s) => s.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const channel = (c) => ((c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  const lum = ([r, g, b]) => 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
  const e = document.activeElement;
  let bg = 'rgb(255, 255, 255)';
  for (let a = e.parentElement; a; a = a.parentElement) {
    const c = getComputedStyle(a).backgroundColor;
    if (c !== 'transparent' && !/, 0\\)$/.test(c)) { bg = c; break; }
  }
  const style = getComputedStyle(e);
  const [x, y] = [lum(rgb(style.outlineColor)), lum(rgb(bg))];
  return { style: style.outlineStyle, width: parseFloat(style.outlineWidth), contrast: (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05) };
})()`;

/**
 * In the page: starts recording what its live regions would say: each time the text of an element
 * that is a live region (`aria-live` other than `off`, or role `status`, `alert` or `log`), or is
 * inside one, changes to a non-empty text while no ancestor is `aria-busy`: `[region id, text]`,
 * into `window.__said` (a region saying the same twice in a row counts once).
 */
const RECORD_LIVE = `(() => {
  window.__said = [];
  const live = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const role = e.getAttribute('role');
      const attr = e.getAttribute('aria-live');
      if (attr === 'off') return null;
      if (attr || role === 'status' || role === 'alert' || role === 'log') return e;
    }
    return null;
  };
  new MutationObserver((mutations) => {
    for (const m of mutations) {
      const el = m.target.nodeType === Node.ELEMENT_NODE ? m.target : m.target.parentElement;
      const region = el && live(el);
      if (!region || region.closest('[aria-busy=true]')) continue;
      const text = region.textContent.trim();
      const last = window.__said.at(-1);
      if (text && !(last && last[0] === region.id && last[1] === text)) window.__said.push([region.id, text]);
    }
  }).observe(document.body, { subtree: true, childList: true, characterData: true });
})()`;

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
  const ui = useAuditPage();
  const { itInPage } = ui;
  const compactionIds: string[] = [];

  beforeAll(async () => {
    const path = { sessionId: SESSION };
    const events: Array<{ id: string; type: 'system' | 'user' | 'assistant'; text: string }> = [{ id: 'e0', type: 'system', text: 'You are a test agent.' }];
    for (let i = 1; i <= EVENTS; i++)
      events.push({
        id: `e${i}`,
        type: i % 2 ? 'user' : 'assistant',
        text: `${i % 2 ? 'question' : 'answer'} ${i} ${EVERYWHERE}${i <= FEW ? ` ${FEW_WORD}` : ''}`,
      });
    const half = EVENTS / 2;
    for (const [i, part] of [events.slice(0, half), events.slice(half)].entries()) {
      const appended = await ui.client.POST('/v1/sessions/{sessionId}/events', { params: { path }, body: { userId: 'kb-user', events: part } as never });
      expect(appended.response.status).toBe(201);
      // The second one with the client's own request id (requestedBy.requestIdFrom "client").
      const { data } = await ui.client.POST('/v1/sessions/{sessionId}/compactions', {
        params: { path },
        body: { strategy: { type: 'sliding-window', maxEvents: 40 } },
        headers: i === 1 ? { 'X-Request-Id': TICKET } : {},
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
      await ui.client.POST('/v1/sessions/{sessionId}/events', { params: { path: { sessionId: SUMMARIZED } }, body: { events: turns } });
      const { data } = await ui.client.POST('/v1/sessions/{sessionId}/compactions', { params: { path: { sessionId: SUMMARIZED } }, body: { strategy } });
      expect(data!.outcome).toBe('compacted');
    }
    for (let from = 0; from < LONG_EVENTS; from += 275) {
      const batch = Array.from({ length: 275 }, (_, i) => ({ type: (from + i) % 2 ? ('assistant' as const) : ('user' as const), text: `line ${from + i}` }));
      const { response } = await ui.client.POST('/v1/sessions/{sessionId}/events', { params: { path: { sessionId: LONG } }, body: { events: batch } });
      expect(response.status).toBe(201);
    }
    for (let i = 0; i <= 100; i++)
      await ui.client.POST('/v1/sessions/{sessionId}/events', {
        params: { path: { sessionId: `kb-many-${String(i).padStart(3, '0')}` } },
        body: { userId: MANY_USER, events: [{ type: 'user', text: 'hi' }] },
      });
    // Recall reads a projection: wait until it has every hit of the few-word search.
    for (let tries = 0; ; tries++) {
      const { data } = await ui.client.GET('/v1/recall', { params: { query: { q: FEW_WORD, sessionId: SESSION, limit: 100 } } });
      if (data!.items.length === FEW) break;
      if (tries > 100) throw new Error(`recall found ${data!.items.length} of ${FEW} hits`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }, 120_000);

  /** Opens the session page (a fresh load: the browser's focus starts at the top). */
  const openSession = async () => {
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${SESSION}`);
    await ui.page.locator('#compactions tbody tr').first().waitFor();
  };

  // nca11y F1, F5, A2: rows were <tr onclick> and the chart's marks SVG lines with a click listener only.
  itInPage('opens a compaction of the list with Enter, focuses its details, and Escape or Close gives the focus back', async () => {
    await openSession();
    // Tab from the panel's heading: every stop in the list is a link to a compaction, named with its full id.
    await ui.page.locator('h2', { hasText: 'Compactions (' }).click();
    await ui.page.keyboard.press('Tab');
    expect((await focused(ui.page)).inside).toContain('#compactions');
    const link = await ax(ui.page, ':focus');
    expect(link.role).toBe('link');
    expect(link.name).toBe(`compaction #1 ${compactionIds[0]}`);
    await ui.page.keyboard.press('Tab');
    expect(await ax(ui.page, ':focus')).toMatchObject({ role: 'link', name: `compaction #2 ${compactionIds[1]}` });

    await ui.page.keyboard.press('Enter');
    await ui.page.locator(`#diff[data-compaction="${compactionIds[1]}"]`).waitFor();
    await waitInPage(ui.page, "document.activeElement?.id === 'diff-heading'");
    const heading = await ax(ui.page, ':focus');
    expect(heading.role).toBe('heading');
    expect(heading.name).toBe(`Compaction ${compactionIds[1]}`);
    await waitInPage(ui.page, "/details opened/.test(document.querySelector('#announce')?.textContent ?? '')");
    expect((await ax(ui.page, '#announce')).properties.live).toBe('polite');

    await ui.page.keyboard.press('Escape');
    await ui.page.locator('#diff').waitFor({ state: 'detached' });
    await waitInPage(ui.page, "document.activeElement?.closest('#compactions') !== null");
    expect(await ax(ui.page, ':focus')).toMatchObject({ role: 'link', name: `compaction #2 ${compactionIds[1]}` });

    // Again, closed with its Close button (Space on it): the next Tab stop after the heading.
    await ui.page.keyboard.press('Enter');
    await waitInPage(ui.page, "document.activeElement?.id === 'diff-heading'");
    await ui.page.keyboard.press('Tab');
    expect(await ax(ui.page, ':focus')).toMatchObject({ role: 'button', name: 'Close' });
    await ui.page.keyboard.press('Space');
    await ui.page.locator('#diff').waitFor({ state: 'detached' });
    await waitInPage(ui.page, "document.activeElement?.closest('#compactions') !== null");
    expect(await ax(ui.page, ':focus')).toMatchObject({ role: 'link', name: `compaction #2 ${compactionIds[1]}` });
  });

  // ncuiaudit A1: every mark was its own Tab stop (about 173 stops before the timeline on a session
  // of many compactions); its focus showed as a thicker line only.
  itInPage('makes the chart one Tab stop whose marks the arrow keys go through, opens one with Enter; the chart has a text alternative', async () => {
    await openSession();
    expect(await ui.page.evaluate("[...document.querySelectorAll('#chart a')].filter((a) => a.tabIndex >= 0).length")).toBe(1);
    await ui.page.locator('#chart-estimator').focus();
    await ui.page.keyboard.press('Tab');
    expect((await focused(ui.page)).inside).toContain('#chart');
    const mark = await ax(ui.page, ':focus');
    expect(mark.role).toBe('link');
    expect(mark.name).toMatch(new RegExp(`^compaction #1 compacted ${compactionIds[0]} at revision \\d+: `));
    // Focused by the keyboard, its hit line is drawn in the focus colour, at 3:1 or more on white.
    const ring = await ui.page.evaluate<{ stroke: string; contrast: number }>(`(() => {
      const rgb = (s) => (s.match(/[\\d.]+/g) ?? ['255', '255', '255']).slice(0, 3).map(Number);
      const channel = (c) => ((c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
      const lum = ([r, g, b]) => 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
      const stroke = getComputedStyle(document.activeElement.querySelector('.hit')).stroke;
      return { stroke, contrast: (1.05) / (lum(rgb(stroke)) + 0.05) };
    })()`);
    expect(ring.stroke).not.toMatch(/none|transparent|rgba\(0, 0, 0, 0\)/);
    expect(ring.contrast).toBeGreaterThanOrEqual(3);
    await ui.page.keyboard.press('ArrowRight');
    expect((await ax(ui.page, ':focus')).name).toMatch(new RegExp(`^compaction #2 compacted ${compactionIds[1]}`));
    await ui.page.keyboard.press('ArrowRight');
    expect((await ax(ui.page, ':focus')).name).toMatch(new RegExp(`^compaction #2 `));
    await ui.page.keyboard.press('Home');
    expect((await ax(ui.page, ':focus')).name).toMatch(new RegExp(`^compaction #1 `));
    await ui.page.keyboard.press('End');
    expect((await ax(ui.page, ':focus')).name).toMatch(new RegExp(`^compaction #2 `));
    // The mark last focused is the chart's one Tab stop: Tab leaves the chart, Shift+Tab comes back to it.
    await ui.page.keyboard.press('Tab');
    expect((await focused(ui.page)).inside).not.toContain('#chart');
    await ui.page.keyboard.press('Shift+Tab');
    expect((await ax(ui.page, ':focus')).name).toMatch(new RegExp(`^compaction #2 compacted ${compactionIds[1]}`));
    await ui.page.keyboard.press('Enter');
    await ui.page.locator(`#diff[data-compaction="${compactionIds[1]}"]`).waitFor();
    await waitInPage(ui.page, "document.activeElement?.id === 'diff-heading'");
    const chart = await ax(ui.page, '#chart svg');
    expect(chart.name).toMatch(/^window size \(\w+\) over revisions$/);
    expect(chart.description).toMatch(/^Window size in \w+: [\d,]+ tokens at revision \d+, .*2 compactions, each a link on the chart/);
  });

  // nca11y F2, F3: the buttons were disabled while their page was read, which sent the focus to <body>.
  itInPage('keeps the focus on "More hits" while more follow, moves it to the first new hit when none do, and announces the count', async () => {
    await openSession();
    const input = ui.page.locator('#recall input[name=recall]');
    expect((await ax(ui.page, '#recall input[name=recall]')).name).toBe('Words to find (archived events included)');
    expect((await ax(ui.page, '#recall-results')).name).toBe('Recall hits');
    const status = await ax(ui.page, '#recall-status');
    expect(status.role).toBe('status');
    expect(status.properties.live).toBe('polite');

    await input.focus();
    await ui.page.keyboard.type(EVERYWHERE);
    await ui.page.keyboard.press('Enter');
    await ui.page.locator('#recall-status', { hasText: '20 hits shown; more follow' }).waitFor();
    await ui.page.locator('#recall-more').focus();
    await ui.page.keyboard.press('Enter');
    await ui.page.locator('#recall-status', { hasText: '40 hits shown; more follow' }).waitFor();
    expect((await focused(ui.page)).id).toBe('recall-more');

    await input.fill('');
    await input.focus();
    await ui.page.keyboard.type(FEW_WORD);
    await ui.page.keyboard.press('Enter');
    await ui.page.locator('#recall-status', { hasText: '20 hits shown; more follow' }).waitFor();
    await ui.page.locator('#recall-more').focus();
    await ui.page.keyboard.press('Enter');
    await ui.page.locator('#recall-status', { hasText: `${FEW} hits, all shown` }).waitFor();
    expect(await ui.page.locator('#recall-more').isHidden()).toBe(true);
    const hit = await ui.page.evaluate(`(() => {
      const e = document.activeElement;
      return { tag: e.tagName, index: [...e.parentElement.children].indexOf(e), list: e.parentElement.id };
    })()`);
    expect(hit).toEqual({ tag: 'LI', index: 20, list: 'recall-results' });
    expect((await ax(ui.page, ':focus')).role).toBe('listitem');
  });

  itInPage(
    'keeps the focus on "Load more" of the list: on the first new row when it was the last page; the count is a live region that waits for typing to pause',
    async () => {
      await ui.page.goto(`${ui.harness.baseUrl}/ui#/?user=${MANY_USER}`);
      await ui.page.locator('#more:not([hidden])').waitFor();
      expect((await ax(ui.page, 'input[name=search]')).name).toBe('Session id contains');
      expect((await ax(ui.page, 'input[name=userId]')).name).toBe('User id (exact)');
      const count = await ax(ui.page, '#session-count');
      expect(count.role).toBe('status');
      expect(count.properties.live).toBe('polite');

      await ui.page.locator('#more').focus();
      await ui.page.keyboard.press('Enter');
      await ui.page.locator('#session-count', { hasText: '101 loaded, all listed' }).waitFor();
      await waitInPage(ui.page, "document.activeElement?.tagName === 'TR'");
      expect(await ui.page.evaluate("document.activeElement.getAttribute('data-session')")).toBe('kb-many-000');
      expect((await ax(ui.page, ':focus')).role).toBe('row');

      // Typing in the search text: the table and count change at once, the count is said when typing pauses.
      await ui.page.locator('input[name=search]').focus();
      await ui.page.keyboard.type('kb-many-09');
      expect(await ui.page.locator('#session-count').getAttribute('aria-live')).toBe('off');
      expect(await ui.page.locator('#session-count').innerText()).toBe('10 of 101 loaded match, all listed');
      await waitInPage(ui.page, "!document.querySelector('#session-count').hasAttribute('aria-live')");
      expect((await ax(ui.page, '#session-count')).properties.live).toBe('polite');
    },
  );

  // nca11y F4: the row gone to had only a CSS outline, and a revision past the end outlined the last row.
  itInPage('focuses the row "Go to revision" and "Go to time" go to, marks it aria-current and says which; past the end marks none', async () => {
    await openSession();
    await ui.page.locator('#timeline-goto input[name=revision]').focus();
    await ui.page.keyboard.type('230');
    await ui.page.keyboard.press('Enter');
    await ui.page.locator('#timeline-goto-status', { hasText: 'went to revision 230' }).waitFor();
    const row = await focused(ui.page);
    expect(row).toMatchObject({ tag: 'LI', ariaCurrent: 'location', inside: ['#timeline'] });
    expect(await focusedText(ui.page)).toMatch(/^#230 /);
    expect((await ax(ui.page, ':focus')).role).toBe('listitem');
    expect((await ax(ui.page, '#timeline-goto-status')).properties.live).toBe('polite');

    await ui.page.locator('#timeline-goto input[name=revision]').fill('99999');
    await ui.page.locator('#timeline-goto input[name=revision]').press('Enter');
    await ui.page.locator('#timeline-goto-status', { hasText: 'revision 99999 is past the end of this timeline' }).waitFor();
    expect(await ui.page.locator('#timeline li.target, #timeline li[aria-current=location]').count()).toBe(0);

    await ui.page.locator('#timeline-goto-time input[name=time]').fill(new Date(Date.now() + 60_000).toISOString());
    await ui.page.locator('#timeline-goto-time input[name=time]').press('Enter');
    await waitInPage(ui.page, "document.activeElement?.matches('#timeline li.target[aria-current=location]')");
    const last = await ui.page.locator('#timeline-time-status').innerText();
    expect(await focusedText(ui.page)).toContain(`#${/revision (\d+)/.exec(last)![1]} `);
  });

  // nca11y F6: focus stayed on <body> and the title said "Session audit" for every page.
  itInPage('names the opened session in the document title and moves the focus to its heading', async () => {
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/?user=kb-user`);
    await ui.page.locator(`#sessions tr[data-session="${SESSION}"]`).waitFor();
    expect(await ui.page.title()).toBe('Sessions – Session audit');
    await ui.page.locator(`#sessions tr[data-session="${SESSION}"] a`).focus();
    await ui.page.keyboard.press('Enter');
    await ui.page.locator('#timeline').waitFor();
    await waitInPage(ui.page, "document.activeElement?.id === 'session-title'");
    expect(await ui.page.title()).toBe(`Session ${SESSION} – Session audit`);
    expect(await ax(ui.page, ':focus')).toMatchObject({ role: 'heading', name: SESSION });
    await ui.page.locator(`#compactions tr[data-compaction="${compactionIds[0]}"] a`).press('Enter');
    await waitInPage(ui.page, "document.activeElement?.id === 'diff-heading'");
    expect(await ui.page.title()).toBe(`Compaction ${compactionIds[0].slice(0, 8)}… – Session ${SESSION} – Session audit`);
  });

  // nca11y A5: at 1280 px the list scrolled sideways, its "at" column cut to "2026-12-0…";
  // ncaudit2 A1: with recursive-summarization rows the "at" column still spilled 22 px past the panel.
  itInPage('fits the compaction list, its time column (recorded, store time) whole, in a 1280 px wide window (also with summarizing strategies)', async () => {
    await ui.page.setViewportSize({ width: 1280, height: 900 });
    try {
      for (const sessionId of [SESSION, SUMMARIZED]) {
        await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${sessionId}`);
        await ui.page.locator('#compactions tbody tr').first().waitFor();
        const fit = await ui.page.evaluate<{ panel: number; content: number; table: number; atRight: number; panelRight: number }>(`(() => {
          const panel = document.querySelector('section[aria-labelledby=compactions-heading]');
          const table = document.querySelector('#compactions');
          // every row's time cell, the widest strategy name included
          const atRight = Math.max(...[...document.querySelectorAll('#compactions tr > :last-child')].map((c) => c.getBoundingClientRect().right));
          return { panel: panel.clientWidth, content: panel.scrollWidth, table: table.getBoundingClientRect().right, atRight, panelRight: panel.getBoundingClientRect().right };
        })()`);
        expect(fit.content).toBeLessThanOrEqual(fit.panel);
        expect(fit.atRight).toBeLessThanOrEqual(fit.panelRight);
        expect(fit.table).toBeLessThanOrEqual(fit.panelRight);
      }
    } finally {
      await ui.page.setViewportSize(PAGE_VIEWPORT);
    }
  });

  // nca11y F7: #6b7384 on the archived rows' #fdecea was 4.16:1.
  itInPage('writes the grey text of archived rows at a contrast of at least 4.5:1 (WCAG AA)', async () => {
    await openSession();
    const ratios = await ui.page.evaluate<number[]>(CONTRASTS);
    expect(ratios.length).toBeGreaterThanOrEqual(3);
    for (const ratio of ratios) expect(ratio).toBeGreaterThanOrEqual(4.5);
  });

  // ncuiaudit F1: named "archived by compaction <full id>", which does not hold the visible
  // "archived by 1b2c3d4e…" (WCAG 2.5.3); the estimator's <select> was named by its title only.
  itInPage('names "archived by" links with their visible words first, then the full id; labels the chart\'s estimator', async () => {
    await openSession();
    const links = await ui.page.evaluate<
      Array<{ shown: string; selector: string }>
    >(`[...document.querySelectorAll('#timeline li[data-event] a.badge.archived')]
      .slice(0, 3).map((a) => ({ shown: a.innerText, selector: '#timeline li[data-event="' + a.closest('li').dataset.event + '"] a.badge.archived' }))`);
    expect(links).toHaveLength(3);
    for (const { shown, selector } of links) {
      expect(shown).toMatch(/^archived by [0-9a-f]{8}…$/);
      const name = (await ax(ui.page, selector)).name;
      expect(name.startsWith(shown)).toBe(true);
      const id = compactionIds.find((c) => name.endsWith(`, compaction ${c}`));
      expect(id).toBeDefined();
      expect(shown).toBe(`archived by ${id!.slice(0, 8)}…`);
    }
    const select = await ax(ui.page, '#chart-estimator');
    expect(select.role).toBe('combobox');
    expect(select.name).toBe('Window counted in');
    expect(await ui.page.evaluate("document.querySelector('#chart-estimator').labels.length")).toBe(1);
    expect(await ui.page.locator('#chart-estimator').getAttribute('title')).toBeNull();
  });

  // ncuiaudit F2: the timeline turned to the compaction's marker (page 2), the link that opened it
  // (page 1) left the page, and Escape sent the focus to the compaction list instead.
  itInPage('gives the focus back to the "archived by" link that opened a compaction on another timeline page, on its page', async () => {
    await openSession();
    expect(await ui.page.locator('#timeline-range').innerText()).toMatch(/^1–200 of /);
    // An event of page 1 archived by the second compaction, whose marker is on page 2.
    const event = await ui.page.evaluate<string>(`[...document.querySelectorAll('#timeline li[data-event] a.badge.archived')]
      .find((a) => a.getAttribute('aria-label').includes(${JSON.stringify(compactionIds[1])})).closest('li').dataset.event`);
    const link = `#timeline li[data-event="${event}"] a.badge.archived`;
    await ui.page.locator(link).focus();
    await ui.page.keyboard.press('Enter');
    await ui.page.locator(`#diff[data-compaction="${compactionIds[1]}"]`).waitFor();
    await waitInPage(ui.page, "document.activeElement?.id === 'diff-heading'");
    expect(await ui.page.locator('#timeline-range').innerText()).toMatch(/^201–/);

    await ui.page.keyboard.press('Escape');
    await ui.page.locator('#diff').waitFor({ state: 'detached' });
    await waitInPage(ui.page, "document.activeElement?.closest('#timeline') !== null");
    expect(await ui.page.evaluate<boolean>(`document.activeElement === document.querySelector(${JSON.stringify(link)})`)).toBe(true);
    expect(await ui.page.locator('#timeline-range').innerText()).toMatch(/^1–200 of /);
    expect((await ax(ui.page, ':focus')).name).toBe(`archived by ${compactionIds[1].slice(0, 8)}…, compaction ${compactionIds[1]}`);
  });

  // ncuiaudit F3: requestedBy was served by the API but not shown.
  itInPage('says who asked for a commanded compaction: transport, key, request id and who chose it', async () => {
    const { data } = await ui.client.GET('/v1/sessions/{sessionId}/compactions', { params: { path: { sessionId: SESSION } } });
    const first = data!.compactions.find((c) => c.compactionId === compactionIds[0])!;
    expect(first.requestedBy).toMatchObject({ via: 'http', requestIdFrom: 'service' });
    for (const [id, expected] of [
      [compactionIds[0], `over HTTP, no API key (open mode), request id ${first.requestedBy!.requestId} (made by the service)`],
      [compactionIds[1], `over HTTP, no API key (open mode), request id ${TICKET} (the client's X-Request-Id)`],
    ] as const) {
      await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${SESSION}/c/${id}`);
      await ui.page.locator(`#diff[data-compaction="${id}"] #requested-by`).waitFor();
      expect(await ui.page.locator('#requested-by').innerText()).toBe(expected);
    }
  });

  // ncuiaudit A1: about 173 Tab stops before the content, no skip link; Chromium's default ring (1 px, auto).
  itInPage('offers "Skip to content" as the first Tab stop, to the page\'s heading', async () => {
    await openSession();
    await ui.page.keyboard.press('Tab');
    expect(await ax(ui.page, ':focus')).toMatchObject({ role: 'link', name: 'Skip to content' });
    const box = await ui.page.evaluate<{ top: number; height: number }>('document.activeElement.getBoundingClientRect().toJSON()');
    expect(box.top).toBeGreaterThanOrEqual(0);
    expect(box.height).toBeGreaterThan(10);
    await ui.page.keyboard.press('Enter');
    await waitInPage(ui.page, "document.activeElement?.id === 'session-title'");
    expect(ui.page.url()).toMatch(new RegExp(`#/s/${SESSION}$`));
    // From the session's heading on: "read again" is the next stop ("← all sessions" comes before the heading).
    await ui.page.keyboard.press('Tab');
    expect(await focusedText(ui.page)).toBe('read again');
  });

  itInPage('draws a solid focus ring of 3:1 or more on links, buttons and inputs', async () => {
    await openSession();
    // The ring of a link, a button and an input, each reached by the keyboard.
    await ui.page.locator('#chart-estimator').focus();
    await ui.page.keyboard.press('Shift+Tab');
    expect(await focusedText(ui.page)).toBe('read again');
    const rings = [await ui.page.evaluate<{ style: string; width: number; contrast: number }>(FOCUS_RING)];
    await ui.page.locator('#timeline-goto input[name=revision]').focus();
    await ui.page.keyboard.press('Shift+Tab');
    expect(await focusedText(ui.page)).toBe('Last');
    rings.push(await ui.page.evaluate(FOCUS_RING));
    await ui.page.keyboard.press('Tab');
    rings.push(await ui.page.evaluate(FOCUS_RING));
    for (const ring of rings) {
      expect(ring.style).toBe('solid');
      expect(ring.width).toBeGreaterThanOrEqual(2);
      expect(ring.contrast).toBeGreaterThanOrEqual(3);
    }
  });

  // ncuiaudit A2: the loading line was a live region rewritten after every log page (34 updates
  // for a long session), with no announcement that the read was done.
  itInPage('announces reading a session once, when done; its progress line is not a live region', async () => {
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/?user=kb-user`);
    await ui.page.locator(`#sessions tr[data-session="${SESSION}"]`).waitFor();
    await ui.page.evaluate(RECORD_LIVE);
    await ui.page.evaluate(`location.hash = '#/s/${LONG}'`);
    await ui.page.locator('#timeline').waitFor();
    await ui.page.locator('#loading').waitFor({ state: 'hidden' });
    // (The page before the fix said nothing when done: the list below then shows what it said.)
    await waitInPage(ui.page, "/read:/.test(document.querySelector('#announce').textContent)", 3_000).catch(() => undefined);
    const said = await ui.page.evaluate<Array<[string, string]>>('window.__said');
    expect(said).toEqual([['announce', `Session ${LONG} read: ${LONG_EVENTS.toLocaleString('en-US')} log entries, as of revision ${LONG_EVENTS - 1}`]]);
  });

  // ncuiaudit A3: the loading mark spun whatever the system's setting.
  itInPage('stops the loading mark when reduced motion is asked for', async () => {
    const spin = () => ui.page.evaluate<string>("getComputedStyle(document.querySelector('#loading'), '::before').animationName");
    try {
      await openSession();
      await ui.page.emulateMedia({ reducedMotion: 'no-preference' });
      expect(await spin()).toBe('spin');
      await ui.page.emulateMedia({ reducedMotion: 'reduce' });
      expect(await spin()).toBe('none');
    } finally {
      await ui.page.emulateMedia({ reducedMotion: null });
    }
  });

  // ncuiaudit A5: the summary's scroll box had no role, name or Tab stop.
  itInPage("makes a compaction's summary, a scroll box, a named region reached by Tab", async () => {
    const { data } = await ui.client.GET('/v1/sessions/{sessionId}/compactions', { params: { path: { sessionId: SUMMARIZED } } });
    const summarized = data!.compactions.find((c) => c.summary !== null)!;
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${SUMMARIZED}/c/${summarized.compactionId}`);
    await ui.page.locator('#summary-text').waitFor();
    const region = await ax(ui.page, '#summary-text');
    expect(region.role).toBe('region');
    expect(region.name).toBe(`Summary ${summarized.summary!.id} (covers ${summarized.summary!.coveredIds.length} events):`);
    expect(await ui.page.evaluate("document.querySelector('#summary-text').tabIndex")).toBe(0);
  });

  /** Every element of the page that scrolls (its content overflows a box of `overflow` auto or scroll): its id or tag, Tab index and accessible name's source. */
  const scrollBoxes = (): Promise<{ box: string; tabIndex: number; named: boolean }[]> =>
    ui.page.evaluate(`[...document.querySelectorAll('body *')]
      .filter((el) => {
        const style = getComputedStyle(el);
        const scrolls = (o) => o === 'auto' || o === 'scroll';
        return (scrolls(style.overflowY) && el.scrollHeight > el.clientHeight) || (scrolls(style.overflowX) && el.scrollWidth > el.clientWidth);
      })
      .map((el) => ({
        box: el.id || el.tagName.toLowerCase() + '.' + el.className,
        tabIndex: el.tabIndex,
        named: Boolean(el.getAttribute('aria-label') || el.getAttribute('aria-labelledby')),
      }))`);

  // Last stop's leftover: the timeline and the diff's lists scrolled, but the keyboard could not reach them to scroll.
  itInPage(
    "makes every scroll box a named Tab stop (the timeline by its one row that is): the timeline, the recall hits and a compaction's before and after lists",
    async () => {
      await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${SESSION}`);
      await ui.page.locator('#timeline li').first().waitFor();
      const onSession = await scrollBoxes();
      expect(onSession.map((b) => b.box)).toContain('timeline');
      // The timeline's Tab stop is its active row (a roving tabindex): the arrow keys move it and scroll the box.
      for (const box of onSession) expect(box).toEqual({ box: box.box, tabIndex: box.box === 'timeline' ? -1 : 0, named: true });
      expect(await ui.page.evaluate("[...document.querySelectorAll('#timeline > li')].filter((li) => li.tabIndex === 0).length")).toBe(1);
      const { data } = await ui.client.GET('/v1/sessions/{sessionId}/compactions', { params: { path: { sessionId: SUMMARIZED } } });
      await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${SUMMARIZED}/c/${data!.compactions[0].compactionId}`);
      await ui.page.locator('.diff ol').first().waitFor();
      const lists = await ui.page.evaluate(
        "[...document.querySelectorAll('.diff ol')].map((el) => ({ tabIndex: el.tabIndex, name: el.getAttribute('aria-label') }))",
      );
      expect(lists).toEqual([
        { tabIndex: 0, name: "Before: the window's events" },
        { tabIndex: 0, name: "After: the window's events" },
      ]);
      for (const box of await scrollBoxes()) expect(box).toEqual({ box: box.box, tabIndex: box.box === 'timeline' ? -1 : 0, named: true });
    },
  );

  /** The focused timeline row's place in the whole (`aria-posinset`), or null when the focus is not on a row. */
  const rowPlace = (): Promise<number | null> =>
    ui.page.evaluate<number | null>("document.activeElement?.matches('#timeline > li') ? Number(document.activeElement.getAttribute('aria-posinset')) : null");

  // ncsupport F5: every "archived by" link was a Tab stop: Compactions was 48 Tabs away and Recall 52 (218 on a 1,500-entry session).
  itInPage('offers skip links to Compactions and Recall after "Skip to content", shown on focus, and reaches Recall in few Tabs', async () => {
    await openSession();
    for (const name of ['Skip to content', 'Skip to compactions', 'Skip to recall']) {
      await ui.page.keyboard.press('Tab');
      expect(await ax(ui.page, ':focus')).toMatchObject({ role: 'link', name });
      const box = await ui.page.evaluate<{ top: number; height: number }>('document.activeElement.getBoundingClientRect().toJSON()');
      expect(box.top).toBeGreaterThanOrEqual(0);
      expect(box.height).toBeGreaterThan(10);
    }
    // No skip link to "Window at revision" while it is closed.
    expect(await ui.page.locator('#skip-window-at').isHidden()).toBe(true);
    await ui.page.keyboard.press('Enter');
    await waitInPage(ui.page, "document.activeElement?.id === 'recall-heading'");
    expect(ui.page.url()).toMatch(new RegExp(`#/s/${SESSION}$`));
    await ui.page.keyboard.press('Tab');
    expect((await ax(ui.page, ':focus')).name).toBe('Words to find (archived events included)');
    await ui.page.locator('#skip-compactions').focus();
    await ui.page.keyboard.press('Enter');
    await waitInPage(ui.page, "document.activeElement?.id === 'compactions-heading'");
    await ui.page.keyboard.press('Tab');
    expect(await ax(ui.page, ':focus')).toMatchObject({ role: 'link', name: `compaction #1 ${compactionIds[0]}` });

    // With Tab alone, from the top: the timeline is one stop (its row, then that row's links).
    await openSession();
    let tabs = 0;
    let inTimeline = 0;
    while (!(await ui.page.evaluate<boolean>("document.activeElement?.getAttribute('name') === 'recall'"))) {
      await ui.page.keyboard.press('Tab');
      if ((await focused(ui.page)).inside.includes('#timeline')) inTimeline++;
      if (++tabs > 60) throw new Error(`recall not reached in ${tabs} Tabs`);
    }
    expect(tabs).toBeLessThan(30);
    expect(inTimeline).toBeGreaterThanOrEqual(1);
    expect(inTimeline).toBeLessThanOrEqual(3);

    // "Window at revision" open: its skip link shows, after Recall's, and takes the focus to its heading; Close hides it.
    await ui.page.locator('#timeline-goto input[name=revision]').fill('230');
    await ui.page.locator('#timeline-goto input[name=revision]').press('Enter');
    await ui.page.locator('#window-at-heading', { hasText: 'Window at revision 230' }).waitFor();
    await ui.page.locator('#skip-recall').focus();
    await ui.page.keyboard.press('Tab');
    expect(await ax(ui.page, ':focus')).toMatchObject({ role: 'link', name: 'Skip to "Window at revision"' });
    await ui.page.keyboard.press('Enter');
    await waitInPage(ui.page, "document.activeElement?.id === 'window-at-heading'");
    await ui.page.locator('#window-at-close').click();
    expect(await ui.page.locator('#skip-window-at').isHidden()).toBe(true);
  });

  itInPage(
    "moves between timeline rows with the arrow keys, Page Up/Down, Home and End across pages; Enter opens a row's compaction; Tab goes through its links, then out",
    async () => {
      await openSession();
      await ui.page.locator('#timeline-goto-time button[type=submit]').focus();
      await ui.page.keyboard.press('Tab');
      expect(await rowPlace()).toBe(1);
      const first = await ax(ui.page, ':focus');
      expect(first.role).toBe('listitem');
      expect(first.description).toMatch(/^Keyboard: the timeline is one Tab stop, a row\. Up and Down arrows/);
      expect(await ui.page.locator('#timeline-keys').isVisible()).toBe(true);
      await ui.page.keyboard.press('ArrowUp');
      expect(await rowPlace()).toBe(1);
      await ui.page.keyboard.press('ArrowDown');
      expect(await rowPlace()).toBe(2);
      // Said once, when the focus entered: not at every arrow key.
      expect((await ax(ui.page, ':focus')).description).toBe('');
      await ui.page.keyboard.press('PageDown');
      expect(await rowPlace()).toBe(12);
      await ui.page.keyboard.press('PageUp');
      expect(await rowPlace()).toBe(2);
      const total = Number(await ui.page.evaluate<string>("document.querySelector('#timeline > li').getAttribute('aria-setsize')"));
      await ui.page.keyboard.press('End');
      expect(await rowPlace()).toBe(total);
      expect(await ui.page.locator('#timeline-range').innerText()).toMatch(/^201–/);
      await ui.page.keyboard.press('Home');
      expect(await rowPlace()).toBe(1);
      expect(await ui.page.locator('#timeline-range').innerText()).toMatch(/^1–200 of /);
      // Down from the page's last row turns to the next page.
      for (let i = 0; i < 19; i++) await ui.page.keyboard.press('PageDown');
      for (let i = 0; i < 9; i++) await ui.page.keyboard.press('ArrowDown');
      expect(await rowPlace()).toBe(200);
      await ui.page.keyboard.press('ArrowDown');
      expect(await rowPlace()).toBe(201);
      expect(await ui.page.locator('#timeline-range').innerText()).toMatch(/^201–/);
      // One Tab stop on the timeline, wherever the focus went.
      expect(await ui.page.evaluate("[...document.querySelectorAll('#timeline > li')].filter((li) => li.tabIndex === 0).length")).toBe(1);

      // Enter on an archived row opens the compaction that archived it; Escape gives the focus back to the row.
      await ui.page.keyboard.press('Home');
      await ui.page.keyboard.press('ArrowDown');
      expect(await ui.page.evaluate("document.activeElement.classList.contains('archived')")).toBe(true);
      await ui.page.keyboard.press('Enter');
      await ui.page.locator(`#diff[data-compaction="${compactionIds[0]}"]`).waitFor();
      await waitInPage(ui.page, "document.activeElement?.id === 'diff-heading'");
      await ui.page.keyboard.press('Escape');
      await ui.page.locator('#diff').waitFor({ state: 'detached' });
      await waitInPage(ui.page, "document.activeElement?.matches('#timeline > li') === true");
      expect(await rowPlace()).toBe(2);
      // Tab goes to the row's "archived by" link, then out of the timeline; Shift+Tab comes back the same way.
      await ui.page.keyboard.press('Tab');
      expect((await ax(ui.page, ':focus')).name).toBe(`archived by ${compactionIds[0].slice(0, 8)}…, compaction ${compactionIds[0]}`);
      await ui.page.keyboard.press('Tab');
      expect((await focused(ui.page)).inside).not.toContain('#timeline');
      await ui.page.keyboard.press('Shift+Tab');
      expect((await ax(ui.page, ':focus')).name).toMatch(/^archived by /);
      await ui.page.keyboard.press('Shift+Tab');
      expect(await rowPlace()).toBe(2);
      // Space does what Enter does.
      await ui.page.keyboard.press('Space');
      await ui.page.locator(`#diff[data-compaction="${compactionIds[0]}"]`).waitFor();
    },
  );
});
