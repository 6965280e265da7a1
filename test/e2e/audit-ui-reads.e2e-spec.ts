/**
 * The audit page at `/ui` in a real browser (playwright-core driving Debian's Chromium, as in
 * audit-ui.e2e-spec.ts), on how it reads and what its figures mean:
 *  - a session of 130,000 log entries opens (the chart's extent is found without spreading the
 *    points into Math.min/Math.max, which overflows the call stack past ~120,000 arguments);
 *    its routes are answered by a fetch stub inside the page, not written through HTTP;
 *  - the list's count says how many sessions are loaded and whether more are there to load;
 *  - "Load more" clicked twice while a page is read lists each session once;
 *  - a filter applied while "Load more" is read drops that unfiltered page; a recall search drops
 *    the answer of the search before it;
 *  - Filter with only the session id text (filtering the sessions loaded) reads nothing and keeps
 *    them; with another user id it reads the list again from its first page, the count saying so;
 *  - recall pages through `nextCursor` ("More hits") and marks the first mention; a next page
 *    refused as another release's cursor (`cursor_expired`) starts the same search again;
 *  - one page load is one state: the summary is read first and the log and history are cut at its
 *    revision ("As of revision N"), even when events and a compaction land between the reads;
 *  - every token figure names its estimator, and the chart is drawn in one, naming the compactions
 *    counted in another;
 *  - while a session is read, a loading line says so above the page still on screen.
 * Open mode; the slow reads are held by route handlers (no timing assertions). Runs in about 20 s.
 */
import type { Page, Route } from 'playwright-core';
import { describeWithChromium, PAGE_VIEWPORT } from '../support/chromium';
import { useAuditPage } from '../support/audit-page';

/** Sessions written for the list (more than one page of 100). */
const LISTED = 102;
/** Log entries of the stubbed session (past the ~120,000 arguments a spread takes). */
const HUGE = 130_000;

/** Log entries in each block of the stubbed long session: 996 conversation events, its compaction's decision, one event more. */
const BLOCK = 1000;
/**
 * A session of {@link HUGE} log entries every one of which the timeline lists (but the archives),
 * answered inside the page as in the test above, the log in pages of 1,000 as the API gives it.
 * Block k (revisions 1000k…1000k+999): conversation events e<r> at 1000k…1000k+995, the first 500
 * archived by compaction k (`c00k-…`): its EventsArchived, SummaryInserted s<k> and
 * CompactionCompleted at +996…+998; one more event at +999. After the summary's revision 129999,
 * a compaction `late` archives e129999 (the page, as of 129999, shows it in the window and does
 * not list `late`).
 */
const hugeTimelineStub = `(() => {
  const sessionId = 'huge-timeline', entries = ${HUGE}, block = ${BLOCK}, at = '2026-01-01T00:00:00.000Z';
  const costs = { cl100k_base: 10, o200k_base: 10, chars: 40 };
  const cid = (k) => 'c' + String(k).padStart(3, '0') + '-0000-4000-8000-000000000000';
  const archivedIds = (k) => Array.from({ length: 500 }, (_, i) => 'e' + (k * block + i));
  const summary = { sessionId, userId: null, revision: String(entries - 1), lastPosition: String(entries - 1), eventCount: 129610,
    windowEvents: 1000, windowTokens: 10000, estimator: 'cl100k_base', compactionCount: 130, failedCompactionCount: 0,
    noopCompactionCount: 0, triggerStillFires: null, policy: null, createdAt: at, lastActivityAt: at };
  const base = (type, r) => ({ type, revision: String(r), position: String(r), recordedAt: at });
  const event = (r, archivedBy) => ({ ...base('ConversationEventAppended', r), eventId: 'e' + r, kind: r % 2 ? 'assistant' : 'user',
    archived: archivedBy !== undefined, ...(archivedBy ? { archivedBy } : {}),
    data: { event: { id: 'e' + r, type: r % 2 ? 'assistant' : 'user', text: 'event ' + r }, costs } });
  const entry = (r) => {
    if (r === entries) return event(r);
    if (r === entries + 1) return { ...base('EventsArchived', r), compactionId: 'late', data: { compactionId: 'late', archivedIds: ['e' + (entries - 1)] } };
    if (r === entries + 2) return { ...base('CompactionCompleted', r), compactionId: 'late', data: { compactionId: 'late' } };
    const k = Math.floor(r / block), i = r % block;
    if (i < 500) return event(r, cid(k));
    if (i < 996) return event(r);
    if (i === 996) return { ...base('EventsArchived', r), compactionId: cid(k), data: { compactionId: cid(k), archivedIds: archivedIds(k) } };
    if (i === 997) return { ...base('SummaryInserted', r), eventId: 's' + k, compactionId: cid(k), archived: false, data: { id: 's' + k, text: 'summary of block ' + k, costs } };
    if (i === 998) return { ...base('CompactionCompleted', r), compactionId: cid(k), data: { compactionId: cid(k) } };
    return r === entries - 1 ? event(r, 'late') : event(r);
  };
  const compaction = (k, id = cid(k), r = k * block + 998) => ({ compactionId: id, revision: String(r), position: String(r), basedOnRevision: String(r - 3), at, recordedAt: at,
    origin: 'command', outcome: 'compacted', reason: null, estimator: 'cl100k_base', strategy: { type: 'sliding-window', maxEvents: 500 }, trigger: null,
    triggerStillFires: null, tokensBefore: 5000, tokensAfter: 2500, tokensSaved: 2500, keptCount: 500, archivedIds: archivedIds(k), archivedOnArrival: [],
    summary: { id: 's' + k, text: 'summary of block ' + k, coveredIds: archivedIds(k) }, summarizer: null, failure: null, durationMs: 3 });
  const compactions = Array.from({ length: entries / block }, (_, k) => compaction(k));
  compactions.push(compaction(129, 'late', entries + 2));
  const json = (body) => new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
  const realFetch = window.fetch.bind(window);
  window.fetch = async (input, init) => {
    const url = new URL(String(input), location.href);
    const path = url.pathname, root = '/v1/sessions/' + sessionId;
    if (path === root) return json(summary);
    if (path === root + '/compactions') return json({ sessionId, compactions });
    if (path.startsWith(root + '/compactions/') && path.endsWith('/diff')) {
      const id = decodeURIComponent(path.split('/')[5]);
      const side = (r) => ({ revision: String(r), tokens: 100, events: [{ id: 'x', type: 'user', change: 'kept', preview: 'x', revision: String(r), tokens: 100 }] });
      return json({ sessionId, compactionId: id, estimator: 'cl100k_base', archivedIds: [], addedIds: [], archivedOnArrival: [], before: side(1), after: side(2) });
    }
    if (path === root + '/events') {
      const from = Number(url.searchParams.get('fromRevision') ?? 0), last = entries + 2;
      const to = Math.min(from + 1000, last + 1);
      const events = [];
      for (let r = from; r < to; r++) events.push(entry(r));
      return json({ sessionId, revision: String(last), events, ...(to <= last ? { nextRevision: String(to) } : {}) });
    }
    return realFetch(input, init);
  };
})();`;

/** A promise and its resolver. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describeWithChromium('audit page in a browser: reads and units', () => {
  const ui = useAuditPage();
  const { itInPage } = ui;

  const append = async (sessionId: string, events: object[], userId?: string) => {
    const { response } = await ui.client.POST('/v1/sessions/{sessionId}/events', {
      params: { path: { sessionId } },
      body: { events: events as never, ...(userId ? { userId } : {}) },
    });
    expect(response.status).toBe(201);
  };
  const turns = (prefix: string, n: number, words = '') =>
    Array.from({ length: n }, (_, i) => [
      { id: `${prefix}u${i}`, type: 'user', text: `Question ${i} about ORD-${i} ${words}` },
      { id: `${prefix}a${i}`, type: 'assistant', text: `Answer ${i} ${'lorem ipsum '.repeat(10)}` },
    ]).flat();
  /** Sessions in the list, all of them (LISTED plus the ones the other tests write). */
  const allSessions = async () => {
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const { data } = await ui.client.GET('/v1/sessions', { params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } } });
      ids.push(...data!.sessions.map((s) => s.sessionId));
      cursor = data!.nextCursor;
    } while (cursor);
    return ids;
  };
  const openList = async () => {
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/`);
    await ui.page.locator('#sessions tbody tr').first().waitFor();
  };

  beforeAll(async () => {
    for (let i = 0; i < LISTED; i += 10) {
      await Promise.all(
        Array.from({ length: Math.min(10, LISTED - i) }, (_, j) =>
          append(`listed-${String(i + j).padStart(3, '0')}`, [{ type: 'user', text: 'hi' }], `user${(i + j) % 3}`),
        ),
      );
    }
  }, 120_000);

  itInPage(
    'opens a session of 130,000 log entries (no call-stack overflow in the chart)',
    async () => {
      // The session's three routes answered inside the page (its fetch wrapped before the page's
      // script runs: no 130,000 events written, no 10 MB sent over the browser's protocol): ten
      // conversation events of 10 tokens, the rest entries of a type the timeline does not list,
      // each a point of the chart. The log comes in one answer (the API's pages hold at most 1,000;
      // the page reads on while nextRevision comes), so the page's gathering of pages meets 130,000 too.
      const stub = `(() => {
      const sessionId = 'huge-stub', entries = ${HUGE}, at = '2026-01-01T00:00:00.000Z';
      const summary = { sessionId, userId: null, revision: String(entries - 1), lastPosition: String(entries - 1), eventCount: 10,
        windowEvents: 10, windowTokens: 100, estimator: 'cl100k_base', compactionCount: 0, failedCompactionCount: 0,
        noopCompactionCount: 0, triggerStillFires: null, policy: null, createdAt: at, lastActivityAt: at };
      const entry = (r) => r % 13000 === 0
        ? JSON.stringify({ type: 'ConversationEventAppended', revision: String(r), position: String(r), recordedAt: at, eventId: 'e' + r,
            kind: 'user', archived: false, data: { event: { id: 'e' + r, type: 'user', text: 'event ' + r }, costs: { cl100k_base: 10, o200k_base: 10, chars: 40 } } })
        : '{"type":"FillerRecorded","revision":"' + r + '","position":"' + r + '","recordedAt":"' + at + '","data":{}}';
      const answer = (body) => new Response(body, { status: 200, headers: { 'content-type': 'application/json' } });
      const json = (body) => answer(JSON.stringify(body));
      const realFetch = window.fetch.bind(window);
      window.fetch = async (input, init) => {
        const path = new URL(String(input), location.href).pathname;
        if (path === '/v1/sessions/' + sessionId) return json(summary);
        if (path === '/v1/sessions/' + sessionId + '/compactions') return json({ sessionId, compactions: [] });
        if (path === '/v1/sessions/' + sessionId + '/events') return answer('{"sessionId":"' + sessionId + '","revision":"' + summary.revision + '","events":[' + Array.from({ length: entries }, (_, i) => entry(i)).join(',') + ']}');
        return realFetch(input, init);
      };
    })();`;
      const stubbed = await ui.browser.newPage({ viewport: PAGE_VIEWPORT });
      try {
        await stubbed.addInitScript({ content: stub });
        await stubbed.goto(`${ui.harness.baseUrl}/ui#/s/huge-stub`);
        await stubbed.locator('#session-title, #page-error').first().waitFor({ timeout: 60_000 });
        expect(await stubbed.locator('#page-error').count()).toBe(0);
        expect(await stubbed.locator('#session-title').innerText()).toBe('huge-stub');
        expect(await stubbed.locator('#timeline-heading').innerText()).toBe(
          'Log timeline (130,000 log entries: 10 conversation events, 0 decision events, 129,990 other entries)',
        );
        expect(await stubbed.locator('#chart svg text').allTextContents()).toEqual(expect.arrayContaining(['100', 'revision (max 129999)']));
      } finally {
        await stubbed.close();
      }
    },
    90_000,
  );

  describe('a timeline of 130,000 real log entries', () => {
    let huge: Page;
    /** The stubbed session's compaction ids: `c007-…` is the compaction of block 7. */
    const compactionOf = (block: number) => `c${String(block).padStart(3, '0')}-0000-4000-8000-000000000000`;
    /** Rows the timeline lists in a block of BLOCK log entries: 997 conversation events, a summary, a compaction marker. */
    const ROWS = (HUGE / BLOCK) * (BLOCK - 1);
    const rowsShown = () => huge.locator('#timeline > li').count();
    const revisionsShown = async () => (await huge.locator('#timeline > li > .muted:first-child').allInnerTexts()).map((r) => Number(r.replace('#', '')));
    /** Whether `selector`'s element is drawn inside the timeline's scrolled box (not scrolled out of view). */
    const inTimelineView = async (selector: string) => {
      const row = (await huge.locator(selector).boundingBox())!;
      const box = (await huge.locator('#timeline').boundingBox())!;
      return row.y >= box.y - 1 && row.y + row.height <= box.y + box.height + 1;
    };

    beforeAll(async () => {
      huge = await ui.browser.newPage({ viewport: PAGE_VIEWPORT });
      await huge.addInitScript({ content: hugeTimelineStub });
      await huge.goto(`${ui.harness.baseUrl}/ui#/s/huge-timeline`);
      // Reading 130 log pages takes from 10 s to 40 s on a busy machine.
      await huge.locator('#session-title, #page-error').first().waitFor({ timeout: 120_000 });
    }, 150_000);
    afterAll(async () => {
      await huge?.close();
    });

    itInPage('draws a bounded number of rows, counting all of them in the heading and the pager', async () => {
      expect(await huge.locator('#page-error').count()).toBe(0);
      expect(await huge.locator('#timeline-heading').innerText()).toBe(
        `Log timeline (130,000 log entries: ${(129_610).toLocaleString('en-US')} conversation events, 390 decision events)`,
      );
      const rows = await rowsShown();
      expect(rows).toBeGreaterThan(0);
      expect(rows).toBeLessThanOrEqual(500);
      expect(await revisionsShown()).toEqual(Array.from({ length: rows }, (_, i) => i));
      expect(await huge.locator('#timeline-range').innerText()).toContain(`of ${ROWS.toLocaleString('en-US')} rows`);
      // As of the summary's revision: the compaction written after it is not listed.
      expect(await huge.locator('#compactions tbody tr').count()).toBe(HUGE / BLOCK);
    });

    itInPage('turns to the last rows: the last entry, shown as it was at the page’s revision', async () => {
      await huge.locator('#timeline-last').click();
      await huge.locator('#timeline li[data-event="e129999"]').waitFor();
      expect(await rowsShown()).toBeLessThanOrEqual(500);
      const revisions = await revisionsShown();
      expect(revisions.at(-1)).toBe(HUGE - 1);
      // The last row: archived after the page's revision, so in the window as of it.
      const last = huge.locator('#timeline li[data-event="e129999"]');
      expect(await last.getAttribute('class')).not.toContain('archived');
      expect(await last.innerText()).not.toContain('archived by');
      // The last compaction's marker and the rows it archived, far down.
      expect(await huge.locator(`#timeline li.decision[data-compaction="${compactionOf(129)}"]`).innerText()).toContain('compacted (command, sliding-window)');
      expect(await huge.locator('#timeline-range').innerText()).toContain(`${ROWS.toLocaleString('en-US')} of ${ROWS.toLocaleString('en-US')} rows`);
    });

    itInPage('goes to a revision typed in (keyboard only), with the archived marks and compaction links of its rows', async () => {
      await huge.locator('#timeline-goto input[name=revision]').focus();
      await huge.keyboard.type('64250');
      await huge.keyboard.press('Enter');
      const target = huge.locator('#timeline li[data-event="e64250"]');
      await target.waitFor();
      expect(await rowsShown()).toBeLessThanOrEqual(500);
      expect(await inTimelineView('#timeline li[data-event="e64250"]')).toBe(true);
      // Archived by the compaction of its block, whose link names it.
      expect(await target.getAttribute('class')).toContain('archived');
      const link = target.locator('a.badge.archived');
      expect(await link.innerText()).toBe(`archived by ${compactionOf(64).slice(0, 8)}…`);
      // Its neighbours: the block's second half stays in the window.
      const revisions = await revisionsShown();
      expect(revisions).toContain(64_250);
      const marks = await huge
        .locator('#timeline li[data-event^="e"]')
        .evaluateAll((els) =>
          els.map((e) => [e.getAttribute('data-event'), e.classList.contains('archived'), e.querySelector('a.badge')?.textContent ?? null]),
        );
      expect(marks.length).toBeGreaterThan(100);
      expect(marks).toEqual(
        marks.map(([id]) => {
          const r = Number(String(id).slice(1));
          return [id, r % BLOCK < 500, r % BLOCK < 500 ? `archived by ${compactionOf(Math.floor(r / BLOCK)).slice(0, 8)}…` : null];
        }),
      );
      // The link, followed from the keyboard, selects that compaction: its diff, and its marker in the timeline.
      await link.focus();
      await huge.keyboard.press('Enter');
      await huge.locator(`#diff[data-compaction="${compactionOf(64)}"]`).waitFor();
      const marker = `#timeline li.decision[data-compaction="${compactionOf(64)}"]`;
      await huge.locator(marker).waitFor();
      expect(await huge.locator(marker).getAttribute('class')).toContain('selected');
      expect(await huge.locator(marker).innerText()).toContain('compacted (command, sliding-window): 5,000 → 2,500 cl100k_base, 500 archived');
      expect(await inTimelineView(marker)).toBe(true);
      expect(await rowsShown()).toBeLessThanOrEqual(500);
    });

    itInPage('turns to a compaction chosen in the compaction list, far from the rows on screen', async () => {
      await huge.locator('#timeline-first').click();
      await huge.locator('#timeline li[data-event="e0"]').waitFor();
      await huge.locator(`#compactions tr[data-compaction="${compactionOf(100)}"]`).click();
      await huge.locator(`#diff[data-compaction="${compactionOf(100)}"]`).waitFor();
      const marker = `#timeline li.decision[data-compaction="${compactionOf(100)}"]`;
      await huge.locator(marker).waitFor();
      expect(await huge.locator(marker).getAttribute('class')).toContain('selected');
      expect(await huge.locator('#timeline li.selected').count()).toBe(1);
      expect(await inTimelineView(marker)).toBe(true);
      expect(await rowsShown()).toBeLessThanOrEqual(500);
      // The marker stands after its block's conversation events and its summary.
      const revisions = await revisionsShown();
      expect(revisions).toContain(100 * BLOCK + 998);
      expect(await huge.locator(`#timeline li.summary[data-event="s100"]`).innerText()).toContain(`by ${compactionOf(100).slice(0, 8)}…`);
    });

    itInPage(
      'keeps the timeline’s page when the page is read again',
      async () => {
        await huge.locator('#timeline-goto input[name=revision]').fill('90000');
        await huge.locator('#timeline-goto button[type=submit]').click();
        await huge.locator('#timeline li.target[data-event="e90000"]').waitFor();
        const range = await huge.locator('#timeline-range').innerText();
        await huge.locator('#timeline').evaluate((list) => list.setAttribute('data-read-before', ''));
        await huge.locator('#as-of a').click();
        await huge.locator('#timeline:not([data-read-before])').waitFor({ timeout: 120_000 });
        expect(await huge.locator('#timeline-range').innerText()).toBe(range);
        expect(await huge.locator('#timeline li[data-event="e90000"]').count()).toBe(1);
        // Still the compaction of the link, marked, though not on this page.
        expect(huge.url()).toContain(`/c/${compactionOf(100)}`);
        expect(await huge.locator('#compactions tr.selected').getAttribute('data-compaction')).toBe(compactionOf(100));
      },
      150_000,
    );
  });

  // ncimport A5: with ~2,400 sessions the header read "100 of 100 loaded" beside "Load more", as if 100 were all.
  itInPage('says how many sessions are loaded and whether more are there to load (the API gives pages, not a total)', async () => {
    const expected = await allSessions();
    expect(expected.length).toBeGreaterThan(100);
    await openList();
    const count = ui.page.locator('#session-count');
    expect(await count.innerText()).toBe('100 loaded, more available');
    // A search text filters the loaded sessions: how many of them match.
    await ui.page.locator('input[name=search]').fill('listed-1');
    const matching = await ui.page.locator('#sessions tbody tr').count();
    expect(matching).toBeGreaterThan(0);
    expect(await count.innerText()).toBe(`${matching} of 100 loaded match, more available`);
    await ui.page.locator('input[name=search]').fill('');
    await ui.page.locator('#more').click();
    await ui.page.locator('#more').waitFor({ state: 'hidden' });
    expect(await count.innerText()).toBe(`${expected.length} loaded, all listed`);
  });

  // ncaudit64 F1: a session written between the pages moved to the front, past the pages read, and the count said "all listed".
  itInPage('lists a session written while the list is paged, first, when the last page is read: "all listed" holds', async () => {
    await openList();
    expect(await ui.page.locator('#session-count').innerText()).toBe('100 loaded, more available');
    const listedFirst = await ui.page.locator('#sessions tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-session')));
    // a session of the next page, not read yet: written to, it moves before the first page and is on no later one
    const written = (await allSessions()).find((id) => !listedFirst.includes(id))!;
    await append(written, [{ type: 'user', text: 'written while the list is paged' }]);
    await ui.page.locator('#more').click();
    await ui.page.locator('#more').waitFor({ state: 'hidden' });
    const expected = await allSessions();
    const ids = await ui.page.locator('#sessions tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-session')));
    expect(ids).toEqual(expected);
    expect(ids[0]).toBe(written);
    expect(await ui.page.locator('#session-count').innerText()).toBe(`${expected.length} loaded, all listed`);
    // the focus, on "Load more" when it hid, goes to the first row this read listed: the one written meanwhile (newcomer ncrecheck64 F3)
    expect(await ui.page.evaluate("document.activeElement?.getAttribute('data-session')")).toBe(written);
  });

  itInPage('lists each session once when "Load more" is clicked twice while its page is read', async () => {
    const expected = await allSessions();
    expect(expected.length).toBeGreaterThan(100);
    await openList();
    // The next page is held until both clicks are in: the second lands while the first is read.
    const held = gate();
    let asked = 0;
    let answered = 0;
    const slow = async (route: Route) => {
      asked++;
      await held.promise;
      await route.continue();
    };
    const finished = (r: { url(): string }) => void (r.url().includes('cursor=') && answered++);
    ui.page.on('requestfinished', finished);
    await ui.page.route(/\/v1\/sessions\?.*cursor=/, slow);
    try {
      await ui.page.locator('#more').dblclick();
      held.open();
      await ui.page.locator('#more').waitFor({ state: 'hidden' });
      // Every page asked for (one, or two on a double read) answered and drawn.
      for (let i = 0; i < 100 && answered < asked; i++) await new Promise((r) => setTimeout(r, 20));
      await ui.page.evaluate(() => new Promise((r) => setTimeout(r, 50)));
      const ids = await ui.page.locator('#sessions tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-session')));
      expect(ids.length).toBe(new Set(ids).size);
      expect(new Set(ids)).toEqual(new Set(expected));
      expect(await ui.page.locator('#session-count').innerText()).toBe(`${expected.length} loaded, all listed`);
    } finally {
      held.open();
      ui.page.off('requestfinished', finished);
      await ui.page.unroute(/\/v1\/sessions\?.*cursor=/, slow);
    }
  });

  itInPage('drops the unfiltered "Load more" page when a filter is applied while it is read', async () => {
    await openList();
    const held = gate();
    let moreAnswered!: () => void;
    const moreDone = new Promise<void>((r) => (moreAnswered = r));
    const hold = async (route: Route) => {
      await held.promise;
      await route.continue();
    };
    const finished = (r: { url(): string }) => void (r.url().includes('cursor=') && moreAnswered());
    ui.page.on('requestfinished', finished);
    await ui.page.route(/\/v1\/sessions\?.*cursor=/, hold);
    const ofUser1 = Array.from({ length: LISTED }, (_, i) => i).filter((i) => i % 3 === 1).length;
    try {
      await ui.page.locator('#more').click();
      await ui.page.locator('input[name=userId]').fill('user1');
      await ui.page.locator('form button[type=submit]').first().click();
      // The filtered list is drawn (the count beside the filter, '#session-count', is the page's own).
      await ui.page
        .locator('#sessions tbody tr')
        .nth(ofUser1 - 1)
        .waitFor();
      await ui.page.locator('#sessions tbody tr').nth(ofUser1).waitFor({ state: 'detached' });
      held.open();
      await moreDone;
      await ui.page.evaluate(() => new Promise((r) => setTimeout(r, 50)));
      const users = await ui.page.locator('#sessions tbody tr td:nth-child(2)').allInnerTexts();
      expect(users.length).toBeGreaterThan(0);
      expect(users.filter((u) => u !== 'user1')).toEqual([]);
      expect(users.length).toBe(ofUser1);
      expect(await ui.page.locator('#session-count').innerText()).toBe(
        `the user id filter changed; the list was read again from its first page: ${ofUser1} loaded, all listed`,
      );
    } finally {
      held.open();
      ui.page.off('requestfinished', finished);
      await ui.page.unroute(/\/v1\/sessions\?.*cursor=/, hold);
    }
  });

  // newcomer ncaudit72 F2: with more than a page loaded, Filter read the list again from its first page and the matches typed went.
  itInPage('keeps the sessions loaded when Filter (or Enter) only has the session id text; reads again, saying so, for another user id', async () => {
    const expected = await allSessions();
    expect(expected.length).toBeGreaterThan(100);
    // a session of the second page only: its id matches no session of the first
    const wanted = expected[expected.length - 1];
    expect(expected.slice(0, 100).filter((id) => id.includes(wanted))).toEqual([]);
    await openList();
    await ui.page.locator('#more').click();
    await ui.page.locator('#more').waitFor({ state: 'hidden' });
    const count = ui.page.locator('#session-count');
    const all = `${expected.length} loaded, all listed`;
    expect(await count.innerText()).toBe(all);
    const reads: string[] = [];
    const listRead = (r: { url(): string }) => void (/\/v1\/sessions\?/.test(r.url()) && reads.push(r.url()));
    ui.page.on('request', listRead);
    try {
      const search = ui.page.locator('input[name=search]');
      await search.fill(wanted);
      const matching = `1 of ${expected.length} loaded match, all listed`;
      expect(await count.innerText()).toBe(matching);
      // Enter in the search text, then the Filter button: nothing read, the match stays, the count is said at once.
      await search.press('Enter');
      await ui.page.locator('form button[type=submit]', { hasText: 'Filter' }).click();
      await ui.page.evaluate(() => new Promise((r) => setTimeout(r, 100)));
      expect(reads).toEqual([]);
      expect(await count.innerText()).toBe(matching);
      expect(await count.getAttribute('aria-live')).toBeNull();
      expect(await ui.page.locator('#sessions tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-session')))).toEqual([wanted]);
      // Another user id is the API's filter: the list is read again from its first page, the count saying so.
      await ui.page.locator('input[name=userId]').fill('user1');
      await ui.page.locator('input[name=userId]').press('Enter');
      await count.filter({ hasText: 'filter changed' }).waitFor();
      expect(reads).toHaveLength(1);
      expect(new URL(reads[0]).searchParams.get('userId')).toBe('user1');
      expect(new URL(reads[0]).searchParams.get('cursor')).toBeNull();
      const ofUser1 = Array.from({ length: LISTED }, (_, i) => i).filter((i) => i % 3 === 1).length;
      const shown = await ui.page.locator('#sessions tbody tr').count();
      expect(await count.innerText()).toBe(
        `the user id filter changed; the list was read again from its first page: ${shown} of ${ofUser1} loaded match, all listed`,
      );
      // Filter again with the same user id: nothing read.
      await ui.page.locator('form button[type=submit]', { hasText: 'Filter' }).click();
      await ui.page.evaluate(() => new Promise((r) => setTimeout(r, 100)));
      expect(reads).toHaveLength(1);
    } finally {
      ui.page.off('request', listRead);
    }
  });

  itInPage('pages recall hits with "More hits", marks the first mention, and drops the answer of an earlier search', async () => {
    const sessionId = 'recall-pages';
    await append(sessionId, turns('r', 23, 'zephyr'));
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${sessionId}`);
    await ui.page.locator('#timeline').waitFor();
    // A first search held until a second one is answered: its late answer must not replace the second's.
    const held = gate();
    let earlierAnswered!: () => void;
    const earlierDone = new Promise<void>((r) => (earlierAnswered = r));
    const hold = async (route: Route) => {
      await held.promise;
      await route.continue();
    };
    const finished = (r: { url(): string }) => void (r.url().includes('q=lorem') && earlierAnswered());
    ui.page.on('requestfinished', finished);
    await ui.page.route(/\/v1\/recall\?q=lorem/, hold);
    try {
      await ui.page.locator('#recall input[name=recall]').fill('lorem');
      await ui.page.locator('#recall button[type=submit]').click();
      await ui.page.locator('#recall input[name=recall]').fill('zephyr');
      await ui.page.locator('#recall button[type=submit]').click();
      await ui.page.locator('#recall-results li[data-event]').first().waitFor();
      held.open();
      await earlierDone;
      await ui.page.evaluate(() => new Promise((r) => setTimeout(r, 50)));
    } finally {
      held.open();
      ui.page.off('requestfinished', finished);
      await ui.page.unroute(/\/v1\/recall\?q=lorem/, hold);
    }
    const hits = ui.page.locator('#recall-results li[data-event]');
    // Only the second search's hits (the user questions ru…), not the held first one's answers (ra…).
    expect((await hits.evaluateAll((els) => els.map((e) => e.getAttribute('data-event')))).filter((id) => !id!.startsWith('ru'))).toEqual([]);
    expect(await hits.count()).toBe(20);
    expect(await ui.page.locator('#recall-status').innerText()).toBe('20 hits shown; more follow (searched in this session only)');
    // The API answers the first mention first; the page marks it.
    const first = hits.first();
    expect(await first.getAttribute('data-event')).toBe('ru0');
    expect(await first.getAttribute('class')).toContain('first-mention');
    expect(await first.innerText()).toContain('first mention');
    expect(await ui.page.locator('#recall-results li.first-mention').count()).toBe(1);
    await ui.page.locator('#recall-more').click();
    await ui.page.locator('#recall-more').waitFor({ state: 'hidden' });
    const ids = await hits.evaluateAll((els) => els.map((e) => e.getAttribute('data-event')));
    expect(ids.length).toBe(23);
    expect(new Set(ids)).toEqual(new Set(Array.from({ length: 23 }, (_, i) => `ru${i}`)));
    expect(await ui.page.locator('#recall-status').innerText()).toBe('23 hits, all shown (searched in this session only)');
  });

  itInPage('starts the search again from its first page, saying so, when "More hits" sends a cursor of another release (cursor_expired)', async () => {
    const sessionId = 'recall-upgraded';
    await append(sessionId, turns('u', 23, 'quokka'));
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${sessionId}`);
    await ui.page.locator('#timeline').waitFor();
    const hits = ui.page.locator('#recall-results li[data-event]');
    await ui.page.locator('#recall input[name=recall]').fill('quokka');
    await ui.page.locator('#recall button[type=submit]').click();
    await ui.page.locator('#recall-status', { hasText: '20 hits shown; more follow' }).waitFor();
    // The words in the box change, not searched: the search started again is the one sent.
    await ui.page.locator('#recall input[name=recall]').fill('lorem');
    // The next page's cursor as the release before this one wrote it (format version 1), as after an upgrade between the pages.
    const refused: string[] = [];
    const olderCursor = async (route: Route) => {
      const url = new URL(route.request().url());
      const cursor = JSON.parse(Buffer.from(url.searchParams.get('cursor')!, 'base64url').toString('utf8')) as Record<string, unknown>;
      url.searchParams.set('cursor', Buffer.from(JSON.stringify({ ...cursor, v: 1 }), 'utf8').toString('base64url'));
      const response = await route.fetch({ url: url.toString() });
      refused.push(`${response.status()} ${((await response.json()) as { code: string }).code}`);
      await route.fulfill({ response });
    };
    await ui.page.route(/\/v1\/recall\?.*cursor=/, olderCursor, { times: 1 });
    try {
      await ui.page.locator('#recall-more').click();
      // The search started again, or (as before) the refusal shown as an error.
      await ui.page.locator('#recall-status:has-text("search started again"), #recall-results .error-box').first().waitFor();
    } finally {
      await ui.page.unroute(/\/v1\/recall\?.*cursor=/, olderCursor);
    }
    expect(refused).toEqual(['400 cursor_expired']);
    expect(await ui.page.locator('#recall-results .error-box').count()).toBe(0);
    expect(await ui.page.locator('#recall-status').innerText()).toBe(
      'the service was upgraded; search started again: 20 hits shown; more follow (searched in this session only)',
    );
    // The first page of the same search, once; then its pages as usual.
    const firstPage = await hits.evaluateAll((els) => els.map((e) => e.getAttribute('data-event')));
    expect(firstPage.length).toBe(20);
    expect(firstPage.every((id) => id!.startsWith('uu'))).toBe(true);
    await ui.page.locator('#recall-more').click();
    await ui.page.locator('#recall-more').waitFor({ state: 'hidden' });
    const ids = await hits.evaluateAll((els) => els.map((e) => e.getAttribute('data-event')));
    expect(new Set(ids)).toEqual(new Set(Array.from({ length: 23 }, (_, i) => `uu${i}`)));
    expect(ids.length).toBe(23);
    expect(await ui.page.locator('#recall-status').innerText()).toBe('23 hits, all shown (searched in this session only)');
  });

  itInPage('shows one state per page load: the log and compactions cut at the summary’s revision while a writer goes on', async () => {
    const sessionId = 'live-audit';
    const path = { sessionId };
    const strategy = { type: 'sliding-window', maxEvents: 4 } as const;
    await append(sessionId, turns('a', 5));
    expect((await ui.client.POST('/v1/sessions/{sessionId}/compactions', { params: { path }, body: { strategy } })).data!.outcome).toBe('compacted');
    await append(sessionId, turns('b', 3));
    const { data: before } = await ui.client.GET('/v1/sessions/{sessionId}', { params: { path } });

    // The summary is answered as it was; then, before the log is read, more events and a second
    // compaction (archiving events of the summary's revision) land.
    const summaryRead = gate();
    const written = gate();
    let writing: Promise<void> | undefined;
    const onSummary = async (route: Route) => {
      const answer = await route.fetch();
      summaryRead.open();
      await route.fulfill({ response: answer });
    };
    const onLog = async (route: Route) => {
      await summaryRead.promise;
      writing ??= (async () => {
        await append(sessionId, turns('c', 3));
        const { data } = await ui.client.POST('/v1/sessions/{sessionId}/compactions', { params: { path }, body: { strategy } });
        expect(data!.outcome).toBe('compacted');
        written.open();
      })();
      await writing;
      await route.continue();
    };
    const onHistory = async (route: Route) => {
      await written.promise;
      await route.continue();
    };
    const isSummary = (url: URL) => url.pathname === `/v1/sessions/${sessionId}`;
    const isLog = (url: URL) => url.pathname === `/v1/sessions/${sessionId}/events`;
    const isHistory = (url: URL) => url.pathname === `/v1/sessions/${sessionId}/compactions`;
    await ui.page.route(isSummary, onSummary);
    await ui.page.route(isLog, onLog);
    await ui.page.route(isHistory, onHistory);
    try {
      await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${sessionId}`);
      await ui.page.locator('#timeline').waitFor();
    } finally {
      await ui.page.unroute(isSummary, onSummary);
      await ui.page.unroute(isLog, onLog);
      await ui.page.unroute(isHistory, onHistory);
    }
    const { data: after } = await ui.client.GET('/v1/sessions/{sessionId}', { params: { path } });
    expect(BigInt(after!.revision)).toBeGreaterThan(BigInt(before!.revision));
    expect(after!.compactionCount).toBe(2);

    const facts = await ui.page.locator('dl.facts').first().innerText();
    expect(facts).toContain(`revision\n${before!.revision}`);
    expect(facts).toContain(`conversation events\n${before!.eventCount}`);
    const revisions = await ui.page.locator('#timeline > li > .muted:first-child').allInnerTexts();
    expect(Math.max(...revisions.map((r) => Number(r.replace('#', ''))))).toBe(Number(before!.revision));
    expect(await ui.page.locator('#timeline li[data-event^="c"]').count()).toBe(0);
    expect(await ui.page.locator('#timeline-heading').innerText()).toContain(`${before!.eventCount} conversation events`);
    expect(await ui.page.locator('#compactions tbody tr').count()).toBe(before!.compactionCount);
    expect(await ui.page.locator('#chart svg line.mark').count()).toBe(before!.compactionCount);
    // As of that revision, only the first compaction had archived anything.
    const { data: log } = await ui.client.GET('/v1/sessions/{sessionId}/events', { params: { path, query: { limit: 1000 } } });
    const firstCompaction = log!.events.find((e) => e.type === 'CompactionCompleted')!.compactionId;
    const archivedThen = log!.events.filter((e) => e.archived && e.archivedBy === firstCompaction && BigInt(e.revision) <= BigInt(before!.revision));
    const archivedLater = log!.events.filter((e) => e.archived && e.archivedBy !== firstCompaction && BigInt(e.revision) <= BigInt(before!.revision));
    expect(archivedLater.length).toBeGreaterThan(0);
    const shownArchived = await ui.page.locator('#timeline li.archived[data-event]').evaluateAll((els) => els.map((e) => e.getAttribute('data-event')));
    expect(shownArchived.sort()).toEqual(archivedThen.map((e) => e.eventId).sort());
    expect(await ui.page.locator('#as-of').innerText()).toContain(`As of revision ${before!.revision},`);

    // "read again" reads the session as it is now.
    await ui.page.locator('#as-of a').click();
    await ui.page.locator('#as-of', { hasText: `As of revision ${after!.revision},` }).waitFor();
    expect(await ui.page.locator('#compactions tbody tr').count()).toBe(2);
  });

  itInPage('names the estimator of every token figure and draws the chart in one, naming the compactions counted in another', async () => {
    const sessionId = 'mixed-units';
    const path = { sessionId };
    await append(sessionId, turns('A', 6), 'ivy');
    const first = await ui.client.POST('/v1/sessions/{sessionId}/compactions', {
      params: { path },
      body: { strategy: { type: 'token-count', maxTokens: 400 }, estimator: 'chars' },
    });
    expect(first.data!.outcome).toBe('compacted');
    await append(sessionId, turns('B', 6));
    const second = await ui.client.POST('/v1/sessions/{sessionId}/compactions', {
      params: { path },
      body: { strategy: { type: 'token-count', maxTokens: 100 }, estimator: 'cl100k_base' },
    });
    expect(second.data!.outcome).toBe('compacted');
    const policy = { strategy: { type: 'sliding-window', maxEvents: 40 }, trigger: { type: 'turn-count', maxTurns: 50 }, estimator: 'o200k_base' } as const;
    expect((await ui.client.PUT('/v1/sessions/{sessionId}/policy', { params: { path }, body: policy })).response.status).toBe(200);

    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${sessionId}`);
    await ui.page.locator('#timeline').waitFor();
    // The table: each compaction's figures in its own estimator, under a heading that names no unit.
    expect(await ui.page.locator('#compactions thead th:nth-child(5)').textContent()).toBe('before → after (estimator)');
    const cells = await ui.page.locator('#compactions tbody tr td:nth-child(5)').allInnerTexts();
    expect(cells.map((c) => c.replace(/\s+/g, ' '))).toEqual([
      `${first.data!.tokensBefore.toLocaleString('en-US')} → ${first.data!.tokensAfter.toLocaleString('en-US')} chars`,
      `${second.data!.tokensBefore.toLocaleString('en-US')} → ${second.data!.tokensAfter.toLocaleString('en-US')} cl100k_base`,
    ]);
    // A timeline of one page: all its rows, no page turns ("Go to revision" and "Go to time" stay).
    expect(await ui.page.locator('#timeline-pages').isHidden()).toBe(true);
    expect(await ui.page.locator('#timeline-goto').isVisible()).toBe(true);
    // The timeline's compaction markers too.
    const markers = await ui.page.locator('#timeline li.decision', { hasText: '◆ compaction' }).allInnerTexts();
    expect(markers[0]).toMatch(/ chars, \d+ archived/);
    expect(markers[1]).toMatch(/ cl100k_base, \d+ archived/);
    // The policy line names the policy's estimator.
    expect(await ui.page.locator('dl.facts').first().innerText()).toMatch(
      /policy\nsliding-window \(maxEvents 40\) when turn-count \(maxTurns 50\), counted in o200k_base/,
    );
    // The chart: in the policy's estimator, both compactions marked as counted in another.
    expect(await ui.page.locator('#chart-estimator').inputValue()).toBe('o200k_base');
    expect(await ui.page.locator('#chart svg').getAttribute('aria-label')).toBe('window size (o200k_base) over revisions');
    expect(await ui.page.locator('#chart svg line.mark.other-unit').count()).toBe(2);
    expect(await ui.page.locator('#chart-note').innerText()).toContain('compaction #1 in chars; compaction #2 in cl100k_base');
    // The chart's text alternative says what its figures count: tokens here, characters in chars (ncaudit56 F5: "6,163 tokens" in chars).
    const chartText = () => ui.page.locator('#chart-text').textContent();
    expect(await chartText()).toMatch(/^Window size in o200k_base: [\d,]+ tokens at revision \d+, /);
    // Switched to chars: the first compaction's unit; only the second is in another.
    await ui.page.locator('#chart-estimator').selectOption('chars');
    expect(await ui.page.locator('#chart svg').getAttribute('aria-label')).toBe('window size (chars) over revisions');
    expect(await ui.page.locator('#chart svg line.mark.other-unit').count()).toBe(1);
    expect(await ui.page.locator('#chart-note').innerText()).toContain('compaction #2 in cl100k_base');
    expect(await ui.page.locator('#chart-note').innerText()).not.toContain('#1');
    expect(await chartText()).toMatch(/^Window size in chars: [\d,]+ characters at revision \d+, /);
    expect(await chartText()).not.toContain('token');
    // The diff names its estimator on both sides.
    await ui.page.locator(`#compactions tr[data-compaction="${first.data!.compactionId}"]`).click();
    await ui.page.locator(`#diff[data-compaction="${first.data!.compactionId}"]`).waitFor();
    const sides = await ui.page.locator('#diff .diff h2').allInnerTexts();
    expect(sides[0]).toMatch(/^Before: [\d,]+ chars, \d+ events/);
    expect(sides[1]).toMatch(/^After: [\d,]+ chars, \d+ events/);
  });

  itInPage('says which session it is reading while it reads, the page on screen staying until the answer', async () => {
    const sessionId = 'slow-to-read';
    await append(sessionId, turns('s', 2));
    await openList();
    const held = gate();
    const isLog = (url: URL) => url.pathname === `/v1/sessions/${sessionId}/events`;
    const hold = async (route: Route) => {
      await held.promise;
      await route.continue();
    };
    await ui.page.route(isLog, hold);
    try {
      await ui.page.locator(`#sessions tr[data-session="${sessionId}"] a`).click();
      const loading = ui.page.locator('#loading');
      await loading.waitFor();
      expect(await loading.innerText()).toContain(`Reading session ${sessionId}`);
      expect(await ui.page.locator('#main').getAttribute('aria-busy')).toBe('true');
      expect(await ui.page.locator('#sessions').count()).toBe(1);
      held.open();
      await ui.page.locator('#timeline').waitFor();
      await loading.waitFor({ state: 'hidden' });
      expect(await ui.page.locator('#main').getAttribute('aria-busy')).toBeNull();
    } finally {
      held.open();
      await ui.page.unroute(isLog, hold);
    }
  });
});
