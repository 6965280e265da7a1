/**
 * The audit page at `/ui` in a real browser (playwright-core driving Debian's Chromium, as in
 * audit-ui.e2e-spec.ts), on pagings across a rolling upgrade and where the reader is:
 *  - "Load more" of the session list and the compaction history's pages, refused because another
 *    release made their cursor (400 `cursor_expired`), start again from the first page, say so,
 *    and list nothing twice (as recall's "More hits" does: one rule, `pageOrRestart`);
 *  - a recall hit's "archived by" is a link to that compaction's details, named with its visible
 *    words and then its full id;
 *  - "Go to revision" and "Go to time" are offered on every timeline, one page or many;
 *  - one timeline row at a time carries `aria-current` (the row gone to, else the selected compaction's);
 *  - the "Erasures" view lists the tenant's erasures (no content), and an erased session's link says
 *    when it was erased instead of a bare "not found"; a session id written again after erasures
 *    says which revisions were erased, and when.
 * Open mode; the older release's cursors are made by rewriting the service's answers (its
 * `nextCursor` in another format version), so the service itself answers `cursor_expired`.
 */
import type { Route } from 'playwright-core';
import { describeWithChromium, waitInPage } from '../support/chromium';
import { useAuditPage } from '../support/audit-page';

/** A keyset cursor of list `list` in a format version this release does not write (another release's). */
const otherReleaseCursor = (list: 'sessions' | 'compactions' | 'erasures') =>
  Buffer.from(JSON.stringify({ v: 99, l: list, k: '1' }), 'utf8').toString('base64url');

/**
 * A route handler answering the service's own answer with `nextCursor` set to another release's
 * cursor (as a replica of another version would have given it), recording what the page asked.
 */
function withOtherReleaseCursor(list: 'sessions' | 'compactions' | 'erasures', asked: string[]) {
  return async (route: Route) => {
    asked.push(route.request().url());
    const response = await route.fetch();
    const body = (await response.json()) as Record<string, unknown>;
    await route.fulfill({ response, json: { ...body, nextCursor: otherReleaseCursor(list) } });
  };
}

describeWithChromium('audit page in a browser: pagings across an upgrade, links and the current row', () => {
  const ui = useAuditPage();
  const { itInPage } = ui;
  /** The long session (more than one timeline page) and its compaction. */
  const LONG = 'ua-long';
  let compactionId: string;
  /** A session written and erased, and when. */
  const GONE = 'ua-gone';
  /** The X-Request-Id of GONE's erasure: the Erasures view says who ordered it. */
  const GONE_REQUEST = 'ua-erase-ticket-1';
  let erasedAt: string;

  const append = async (sessionId: string, events: object[]) => {
    const { response } = await ui.client.POST('/v1/sessions/{sessionId}/events', { params: { path: { sessionId } }, body: { events: events as never } });
    expect(response.status).toBe(201);
  };
  const turns = (prefix: string, n: number) =>
    Array.from({ length: n }, (_, i) => [
      { id: `${prefix}u${i}`, type: 'user', text: `Question ${i} about the wombat ORD-${i}` },
      { id: `${prefix}a${i}`, type: 'assistant', text: `Answer ${i}` },
    ]).flat();
  const currentRows = () => ui.page.locator('#timeline [aria-current]').count();

  beforeAll(async () => {
    // 260 conversation events and one compaction: 261 timeline rows, two pages.
    await append(LONG, turns('l', 130));
    const { data } = await ui.client.POST('/v1/sessions/{sessionId}/compactions', {
      params: { path: { sessionId: LONG } },
      body: { strategy: { type: 'sliding-window', maxEvents: 20 } },
    });
    expect(data!.outcome).toBe('compacted');
    compactionId = data!.compactionId!;
    await append('ua-small', turns('s', 3));
    await append(GONE, turns('g', 1));
    const { data: gone } = await ui.client.DELETE('/v1/sessions/{sessionId}', {
      params: { path: { sessionId: GONE } },
      headers: { 'x-request-id': GONE_REQUEST },
    });
    erasedAt = gone!.erasedAt;
  }, 120_000);

  itInPage('starts the session list again from its first page, saying so, when "Load more" sends another release\'s cursor', async () => {
    const asked: string[] = [];
    const firstPage = /\/v1\/sessions\?limit=100&estimator=cl100k_base$/;
    await ui.page.route(firstPage, withOtherReleaseCursor('sessions', asked), { times: 1 });
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/`);
    await ui.page.locator('#more').waitFor();
    expect(await ui.page.locator('#session-count').innerText()).toBe('2 loaded, more available');
    await ui.page.locator('#more').click();
    await ui.page.locator('#session-count', { hasText: 'read again' }).or(ui.page.locator('#banner .error-box')).first().waitFor();
    expect(await ui.page.locator('#banner .error-box').count()).toBe(0);
    expect(await ui.page.locator('#session-count').innerText()).toBe(
      'the service was upgraded; the list was read again from its first page: 2 loaded, all listed',
    );
    const ids = await ui.page.locator('#sessions tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-session')));
    expect(ids.sort()).toEqual([LONG, 'ua-small']);
    expect(await ui.page.locator('#more').isHidden()).toBe(true);
    expect(asked).toHaveLength(1);
  });

  itInPage("reads the compaction history again from its first page, saying so, when a page sends another release's cursor", async () => {
    const asked: string[] = [];
    const firstPage = /\/compactions\?limit=100&minPosition=\d+$/;
    await ui.page.route(firstPage, withOtherReleaseCursor('compactions', asked), { times: 1 });
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${LONG}`);
    await ui.page.locator('#timeline').or(ui.page.locator('#page-error')).first().waitFor();
    expect(await ui.page.locator('#page-error').count()).toBe(0);
    expect(asked).toHaveLength(1);
    expect(await ui.page.locator('#compactions-restarted').innerText()).toBe(
      "the service was upgraded while this history was read (a page's cursor was another release's): it was read again from its first page",
    );
    // Listed once.
    expect(await ui.page.locator('#compactions tbody tr').count()).toBe(1);
    expect(await ui.page.locator('#compactions-heading').innerText()).toBe('Compactions (1)');
  });

  itInPage(
    "shows a compaction from a replica of an older release (no recordedAt in its history items) at its `at`, named as that replica's clock",
    async () => {
      const { data } = await ui.client.GET('/v1/sessions/{sessionId}/compactions/{compactionId}', { params: { path: { sessionId: LONG, compactionId } } });
      const at = data!.at;
      const asked: string[] = [];
      await ui.page.route(
        /\/compactions\?limit=100&minPosition=\d+$/,
        async (route) => {
          asked.push(route.request().url());
          const response = await route.fetch();
          const body = (await response.json()) as { compactions: Array<Record<string, unknown>> };
          await route.fulfill({ response, json: { ...body, compactions: body.compactions.map(({ recordedAt: _dropped, ...older }) => older) } });
        },
        { times: 1 },
      );
      await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${LONG}`);
      await ui.page.locator('#compactions tbody tr').or(ui.page.locator('#page-error')).first().waitFor();
      expect(await ui.page.locator('#page-error').count()).toBe(0);
      expect(asked).toHaveLength(1);
      const time = ui.page.locator('#compactions tbody tr td.recorded time');
      expect(await time.getAttribute('datetime')).toBe(new Date(Date.parse(at)).toISOString());
      expect(await time.getAttribute('title')).toBe(`compaction at (the deciding replica's clock: this replica's release gives no store time): ${at}`);
    },
  );

  itInPage('links a recall hit\'s "archived by" to that compaction\'s details, named with its full id and reached by the keyboard', async () => {
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${LONG}`);
    await ui.page.locator('#timeline').waitFor();
    await ui.page.locator('#recall input[name=recall]').fill('wombat ORD-0');
    await ui.page.locator('#recall button[type=submit]').click();
    const link = ui.page.locator('#recall-results li[data-event="lu0"] a.archived-by');
    await link.waitFor();
    expect(await link.getAttribute('aria-label')).toBe(`archived by ${compactionId.slice(0, 8)}…, compaction ${compactionId}: open its details`);
    expect(await link.innerText()).toBe(`archived by ${compactionId.slice(0, 8)}…`);
    // A Tab stop: Tab from the hit's session link reaches its row link, then it.
    await ui.page.locator('#recall-results li[data-event="lu0"] a').first().focus();
    await ui.page.keyboard.press('Tab');
    expect(await ui.page.evaluate('document.activeElement?.classList.contains("row-link")')).toBe(true);
    await ui.page.keyboard.press('Tab');
    expect(await ui.page.evaluate('document.activeElement?.classList.contains("archived-by")')).toBe(true);
    await ui.page.keyboard.press('Enter');
    await ui.page.locator(`#diff[data-compaction="${compactionId}"]`).waitFor();
  });

  itInPage('offers "Go to revision" and "Go to time" on a timeline of one page', async () => {
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/ua-small`);
    await ui.page.locator('#timeline').waitFor();
    expect(await ui.page.locator('#timeline-pages').isHidden()).toBe(true);
    expect(await ui.page.locator('#timeline-goto-time input[name=time]').isVisible()).toBe(true);
    await ui.page.locator('#timeline-goto input[name=revision]').fill('3');
    await ui.page.locator('#timeline-goto input[name=revision]').press('Enter');
    await ui.page.locator('#timeline-goto-status', { hasText: 'went to revision 3' }).waitFor();
    await waitInPage(ui.page, "document.activeElement?.matches('#timeline li.target[aria-current=location]')");
  });

  itInPage('marks one row at a time aria-current: the row gone to, else the selected compaction’s', async () => {
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${LONG}/c/${compactionId}`);
    const marker = ui.page.locator(`#timeline li[data-compaction="${compactionId}"]`);
    await marker.waitFor();
    expect(await marker.getAttribute('aria-current')).toBe('true');
    expect(await currentRows()).toBe(1);
    // A row on the compaction marker's page.
    await ui.page.locator('#timeline-goto input[name=revision]').fill('230');
    await ui.page.locator('#timeline-goto input[name=revision]').press('Enter');
    await ui.page.locator('#timeline-goto-status', { hasText: 'went to revision 230' }).waitFor();
    expect(await marker.isVisible()).toBe(true);
    expect(await currentRows()).toBe(1);
    expect(await ui.page.locator('#timeline li.target').getAttribute('aria-current')).toBe('location');
    expect(await marker.getAttribute('aria-current')).toBeNull();
    expect(await marker.getAttribute('class')).toContain('selected');
    // Past the end: no row gone to, the selected compaction's row is current again.
    await ui.page.locator('#timeline-goto input[name=revision]').fill('99999');
    await ui.page.locator('#timeline-goto input[name=revision]').press('Enter');
    await ui.page.locator('#timeline-goto-status', { hasText: 'past the end' }).waitFor();
    expect(await currentRows()).toBe(1);
    expect(await marker.getAttribute('aria-current')).toBe('true');
  });

  itInPage('lists the erasures in their own view, without content, reached from the header', async () => {
    const asked: string[] = [];
    await ui.page.route(/\/v1\/erasures\?limit=100$/, withOtherReleaseCursor('erasures', asked), { times: 1 });
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/`);
    await ui.page.locator('#sessions').waitFor();
    await ui.page.locator('#nav-erasures').focus();
    await ui.page.keyboard.press('Enter');
    const row = ui.page.locator(`#erasures tbody tr[data-session="${GONE}"]`);
    await row.waitFor();
    await waitInPage(ui.page, "document.activeElement?.id === 'erasures-title'");
    expect(await ui.page.title()).toBe('Erasures – Session audit');
    const cells = await row.locator('td').allInnerTexts();
    expect(cells.slice(0, 5)).toEqual([
      GONE,
      erasedAt.replace('T', ' ').replace('Z', ' UTC'),
      '2',
      '0–1',
      `over HTTP, no API key (open mode), request id ${GONE_REQUEST} (the client's X-Request-Id)`,
    ]);
    expect(await ui.page.locator('#erasure-count').innerText()).toBe('1 erasure loaded, more available');
    // "Load more" with another release's cursor: the list again from its first page, said, nothing twice.
    await ui.page.locator('#erasures-more').click();
    await ui.page.locator('#erasure-count', { hasText: 'read again' }).or(ui.page.locator('#banner .error-box')).first().waitFor();
    expect(await ui.page.locator('#erasure-count').innerText()).toBe(
      'the service was upgraded; the list was read again from its first page: 1 erasure loaded, all listed',
    );
    expect(await ui.page.locator('#erasures tbody tr').count()).toBe(1);
    expect(asked).toHaveLength(1);
    expect(await ui.page.locator('main').innerText()).not.toContain('Question 0');
  });

  itInPage('says when an erased session was erased instead of a bare "not found"', async () => {
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${GONE}`);
    await ui.page.locator('#session-erased').or(ui.page.locator('#page-error')).first().waitFor();
    expect(await ui.page.locator('#page-error').count()).toBe(0);
    expect(await ui.page.locator('#session-erased').innerText()).toContain(`This session was erased at ${erasedAt.replace('T', ' ').replace('Z', ' UTC')}`);
    expect(await ui.page.locator('#session-erased a[href="#/erasures"]').count()).toBe(1);
    // An id never written is still not found.
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/ua-never`);
    await ui.page.locator('#page-error').waitFor();
    expect(await ui.page.locator('#page-error').innerText()).toContain('session_not_found');
  });

  // ncuiaudit A4: the page of a session id written again started at revision 6 without saying why.
  itInPage('says which revisions of a session id written again were erased, and when (from GET /v1/erasures)', async () => {
    const REBORN = 'ua-reborn';
    const utc = (iso: string) => iso.replace('T', ' ').replace('Z', ' UTC');
    const erase = async () => (await ui.client.DELETE('/v1/sessions/{sessionId}', { params: { path: { sessionId: REBORN } } })).data!.erasedAt;
    await append(REBORN, turns('r1', 2));
    const first = await erase();
    await append(REBORN, turns('r2', 1));
    const second = await erase();
    await append(REBORN, turns('r3', 1));
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${REBORN}`);
    await ui.page.locator('#timeline').waitFor();
    expect(await ui.page.locator('#erased-lives').innerText()).toBe(
      `Written again after an erasure: revisions 0–3 erased on ${utc(first)} (4 events); revisions 4–5 erased on ${utc(second)} (2 events). ` +
        'This page shows revisions 6 on; see Erasures.',
    );
    expect(await ui.page.locator('#erased-lives a[href="#/erasures"]').count()).toBe(1);
    // A replica of a release before GET /v1/erasures: the page opens, saying what it knows.
    await ui.page.route(/\/v1\/erasures\?/, (route) => route.fulfill({ status: 404, json: { code: 'route_not_found', message: 'no route GET /v1/erasures' } }));
    try {
      await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${REBORN}`);
      await ui.page.locator('#timeline').waitFor();
      expect(await ui.page.locator('#erased-lives').innerText()).toBe(
        'Written again after an erasure: revisions 0–5 were erased (when could not be read: no route GET /v1/erasures (404 route_not_found)). ' +
          'This page shows revisions 6 on; see Erasures.',
      );
    } finally {
      await ui.page.unroute(/\/v1\/erasures\?/);
    }
    // newcomer ncui69 F9: "Go to revision" into an erased earlier life said the revision "has no row";
    // newcomer ncaudit72 F1: of the two lives erased, the one that held it (it said "revisions 0–5").
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${REBORN}/r/2`);
    await ui.page.locator('#timeline li.target').waitFor();
    expect(await ui.page.locator('#timeline-goto-status').innerText()).toBe(
      `revision 2 was erased (revisions 0–3, an earlier life of this session id, erased ${utc(first)}): went to revision 6, the first of this life (row 1 of 2)`,
    );
    expect(await ui.page.locator('#timeline li.target').getAttribute('aria-posinset')).toBe('1');
  });

  // newcomer ncaudit72 F1: of a session id erased twice, "Go to revision 5" said "revisions 0–58" (both lives as one).
  itInPage('"Go to revision" names the erased life that held the revision, with its revisions and when it was erased', async () => {
    const TWICE = 'ua-erased-twice';
    const ONCE = 'ua-erased-once';
    const utc = (iso: string) => iso.replace('T', ' ').replace('Z', ' UTC');
    const erase = async (sessionId: string) => (await ui.client.DELETE('/v1/sessions/{sessionId}', { params: { path: { sessionId } } })).data!.erasedAt;
    // life 1: revisions 0–5; life 2: revisions 6–13; written again from revision 14.
    await append(TWICE, turns('t1', 3));
    const t1 = await erase(TWICE);
    await append(TWICE, turns('t2', 4));
    const t2 = await erase(TWICE);
    await append(TWICE, turns('t3', 2));
    await append(ONCE, turns('o1', 3));
    await erase(ONCE);
    await append(ONCE, turns('o2', 2));
    const goTo = async (revision: number) => {
      await ui.page.locator('#timeline-goto input[name=revision]').fill(String(revision));
      await ui.page.locator('#timeline-goto button[type=submit]').click();
      await ui.page.locator('#timeline-goto-status', { hasText: `revision ${revision} ` }).waitFor();
      return ui.page.locator('#timeline-goto-status').innerText();
    };
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${TWICE}`);
    await ui.page.locator('#erased-lives').waitFor();
    expect(await goTo(5)).toBe(
      `revision 5 was erased (revisions 0–5, an earlier life of this session id, erased ${utc(t1)}): went to revision 14, the first of this life (row 1 of 4)`,
    );
    expect(await goTo(6)).toBe(
      `revision 6 was erased (revisions 6–13, an earlier life of this session id, erased ${utc(t2)}): went to revision 14, the first of this life (row 1 of 4)`,
    );
    // A record written before records named their revisions: the revisions before this life, as before.
    const unnamed = async (route: Route) => {
      const response = await route.fetch();
      const body = (await response.json()) as { erasures: Array<Record<string, unknown>> };
      const erasures = body.erasures.map((e) => (e.sessionId === TWICE && e.firstRevision === '0' ? { ...e, firstRevision: null, lastRevision: null } : e));
      await route.fulfill({ response, json: { ...body, erasures } });
    };
    await ui.page.route(/\/v1\/erasures\?/, unnamed);
    try {
      await ui.page.goto(`${ui.harness.baseUrl}/ui#/`);
      await ui.page.locator('#sessions').waitFor();
      await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${TWICE}`);
      await ui.page.locator('#erased-lives', { hasText: 'revisions not recorded' }).waitFor();
      expect(await goTo(5)).toBe(
        'revision 5 was erased (revisions 0–13, an earlier life of this session id): went to revision 14, the first of this life (row 1 of 4)',
      );
      expect(await goTo(7)).toBe(
        `revision 7 was erased (revisions 6–13, an earlier life of this session id, erased ${utc(t2)}): went to revision 14, the first of this life (row 1 of 4)`,
      );
    } finally {
      await ui.page.unroute(/\/v1\/erasures\?/, unnamed);
    }
    // One erasure: as documented, the revisions before this life.
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${ONCE}`);
    await ui.page.locator('#erased-lives').waitFor();
    expect(await goTo(5)).toBe(
      'revision 5 was erased (revisions 0–5, an earlier life of this session id): went to revision 6, the first of this life (row 1 of 4)',
    );
  });
});
