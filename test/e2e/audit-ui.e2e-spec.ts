/**
 * The audit page at `/ui` in a real browser (playwright-core driving Debian's Chromium at
 * /usr/bin/chromium; `.ci/run` installs it): a real conversation from the shared data, compacted
 * twice, found in the session list, its timeline opened, the second compaction selected (its
 * diff shows the archived events and the summary), a recall search finding an archived fact, and
 * a screenshot in .tmp/ui-screenshots. With API keys set, the page without a key shows a prompt
 * and no data, and forgetting the key takes the data off the screen; every time on the page (in a
 * browser in Australia/Lord_Howe) shows its date, the millisecond and "UTC", the timeline each
 * event's recorded and client time; in open mode it lists the sessions at once. Runs in about 15 s.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import type { Schemas } from '@lib/client';
import { loadSessionsFile, splitTurns } from '../../apps/replay/src/sessions-file';
import { TAU_BENCH_FILE } from '../support/shared-dir';
import { startListeningService } from '../support/client-harness';
import { describeWithChromium, PAGE_VIEWPORT } from '../support/chromium';
import { useAuditPage } from '../support/audit-page';

const SCREENSHOTS = path.join(__dirname, '..', '..', '.tmp', 'ui-screenshots');
const KEY = 'ui-test-key-tenant-a';
const SESSION = 'airline-audit-0';

describeWithChromium('audit page in a browser', TAU_BENCH_FILE, () => {
  const ui = useAuditPage({ env: { API_KEYS: `${KEY}:tenantA` }, apiKey: KEY });
  const { itInPage } = ui;
  const compactionIds: string[] = [];

  beforeAll(async () => {
    const [conversation] = loadSessionsFile(TAU_BENCH_FILE);
    const turns = splitTurns(conversation.messages);
    const half = Math.ceil(turns.length / 2);
    const strategy = { type: 'recursive-summarization', maxEventsToKeep: 6, overlapSize: 2 } as const;
    for (const [i, part] of [turns.slice(0, half), turns.slice(half)].entries()) {
      const appended = await ui.client.POST('/v1/sessions/{sessionId}/messages', {
        params: { path: { sessionId: SESSION } },
        body: { messages: part.flat() as never, ...(i === 0 ? { userId: 'traveller-1' } : {}) },
      });
      expect(appended.response.status).toBe(201);
      const { data } = await ui.client.POST('/v1/sessions/{sessionId}/compactions', { params: { path: { sessionId: SESSION } }, body: { strategy } });
      expect(data!.outcome).toBe('compacted');
      compactionIds.push(data!.compactionId!);
      await ui.client.GET('/v1/sessions/{sessionId}', { params: { path: { sessionId: SESSION }, query: { minPosition: data!.position } } });
    }
    await ui.client.POST('/v1/sessions/{sessionId}/events', {
      params: { path: { sessionId: 'another-session' } },
      body: { events: [{ type: 'user', text: 'unrelated' }] },
    });
  }, 120_000);

  itInPage('without a key shows a clear prompt and no data', async () => {
    await ui.page.goto(`${ui.harness.baseUrl}/ui`);
    await ui.page.locator('#key-prompt').waitFor();
    expect(await ui.page.locator('#key-prompt').innerText()).toContain('This service needs an API key. Enter one of');
    expect(await ui.page.locator('#sessions').count()).toBe(0);
    expect(await ui.page.content()).not.toContain(SESSION);
  });

  itInPage('finds the session, opens its timeline, shows the second compaction’s diff with the archived events and the summary', async () => {
    await ui.page.locator('#key-prompt input[name=apiKey]').fill(KEY);
    await ui.page.locator('#key-prompt button[type=submit]').click();
    await ui.page.locator('#sessions').waitFor();
    await ui.page.locator('input[name=search]').fill('audit');
    expect(await ui.page.locator('#sessions tbody tr').count()).toBe(1);
    await ui.page.locator(`#sessions tr[data-session="${SESSION}"]`).click();
    await ui.page.locator('#timeline').waitFor();
    expect(await ui.page.locator('#session-title').innerText()).toBe(SESSION);
    expect(await ui.page.locator('#compactions tbody tr').count()).toBe(2);
    expect(await ui.page.locator('#chart svg line.mark').count()).toBe(2);

    const { data: second } = await ui.client.GET('/v1/sessions/{sessionId}/compactions/{compactionId}', {
      params: { path: { sessionId: SESSION, compactionId: compactionIds[1] } },
    });
    // The timeline marks what each compaction archived.
    const archivedBySecond = ui.page.locator(`#timeline li.archived[data-event="${second!.archivedIds[0]}"]`);
    expect(await archivedBySecond.innerText()).toContain('archived by');

    await ui.page.locator(`#compactions tr[data-compaction="${compactionIds[1]}"]`).click();
    await ui.page.locator(`#diff[data-compaction="${compactionIds[1]}"]`).waitFor();
    const archivedInDiff = await ui.page.locator('#diff li[data-change=archived]').evaluateAll((els) => els.map((e) => e.getAttribute('data-event')));
    expect(archivedInDiff).toEqual(second!.archivedIds);
    expect(await ui.page.locator(`#diff li[data-change=added][data-event="${second!.summary!.id}"]`).count()).toBe(1);
    expect(await ui.page.locator('#summary-text').innerText()).toContain(second!.summary!.text.slice(0, 80));
  });

  itInPage('runs a recall search that finds an archived fact', async () => {
    const { data: log } = await ui.client.GET('/v1/sessions/{sessionId}/events', { params: { path: { sessionId: SESSION }, query: { limit: '1000' } } });
    const archivedUser = log!.events.find((e) => e.kind === 'user' && e.archived);
    const words = String((archivedUser!.data as { event: { text: string } }).event.text)
      .match(/[A-Za-z]{6,}/g)!
      .slice(0, 2)
      .join(' ');
    await ui.page.locator('#recall input[name=recall]').fill(words);
    await ui.page.locator('#recall button[type=submit]').click();
    const hit = ui.page.locator(`#recall-results li.archived[data-event="${archivedUser!.eventId}"]`);
    await hit.waitFor();
    expect(await hit.innerText()).toContain('archived by');
    // The compaction list, times with their dates, fits its panel: no column hidden behind a scroll.
    const [tableWidth, panelWidth] = await ui.page.locator('#compactions').evaluate((t) => [t.scrollWidth, t.parentElement!.clientWidth]);
    expect(tableWidth).toBeLessThanOrEqual(panelWidth);
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await ui.page.screenshot({ path: path.join(SCREENSHOTS, 'timeline-full.png'), fullPage: true });
    await ui.page.screenshot({ path: path.join(SCREENSHOTS, 'timeline.png'), fullPage: true, clip: { x: 0, y: 0, width: 1440, height: 1600 } });
    expect(fs.statSync(path.join(SCREENSHOTS, 'timeline.png')).size).toBeGreaterThan(10_000);
  });

  itInPage('forgetting the key on a session page takes the tenant’s data off the screen and shows the key prompt', async () => {
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/`);
    await ui.page.evaluate(`sessionStorage.setItem('session-audit.apiKey', ${JSON.stringify(KEY)})`);
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${SESSION}`);
    await ui.page.locator('#timeline').waitFor();
    await ui.page.locator('#forget-key').click();
    await ui.page.locator('#key-prompt').waitFor({ timeout: 5_000 });
    expect(await ui.page.locator('#timeline, #compactions, #session-title, #recall-results').count()).toBe(0);
    expect(await ui.page.locator('body').innerText()).not.toContain(SESSION);
    expect(await ui.page.locator('#forget-key').isHidden()).toBe(true);
    expect(await ui.page.evaluate('sessionStorage.length')).toBe(0);
  });

  describe('times: every time with its date, to the millisecond, in UTC named as such, whatever the browser’s zone', () => {
    const sessionId = 'times-0';
    const path = { sessionId };
    /** An ISO-8601 time as the page must show it: its instant in UTC, date and time to the millisecond, the zone named. */
    const utc = (iso: string) => new Date(iso).toISOString().replace('T', ' ').replace('Z', ' UTC');
    const DATE_TIME = /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC/;
    let zoned: Page;
    let summary: Schemas['SessionSummary'];
    let log: Schemas['LogPage'];
    let item: Schemas['CompactionHistoryItem'];

    beforeAll(async () => {
      // Client times: one in UTC, one with an offset and finer digits than milliseconds; a2 has none (the store's time stands).
      const events = [
        { id: 'u1', type: 'user', text: 'booked on new year', createdAt: '2026-01-01T09:00:00Z' },
        { id: 'a1', type: 'assistant', text: 'noted', createdAt: '2026-01-01T09:00:05.5Z' },
        { id: 'u2', type: 'user', text: 'changed after the clocks moved', createdAt: '2026-03-08T03:30:00.123456-04:00' },
        { id: 'a2', type: 'assistant', text: 'changed' },
      ] as const;
      expect((await ui.client.POST('/v1/sessions/{sessionId}/events', { params: { path }, body: { events: events as never } })).response.status).toBe(201);
      const { data: compaction } = await ui.client.POST('/v1/sessions/{sessionId}/compactions', {
        params: { path },
        body: { strategy: { type: 'sliding-window', maxEvents: 2 } },
      });
      expect(compaction!.outcome).toBe('compacted');
      summary = (await ui.client.GET('/v1/sessions/{sessionId}', { params: { path, query: { minPosition: compaction!.position } } })).data!;
      log = (await ui.client.GET('/v1/sessions/{sessionId}/events', { params: { path } })).data!;
      item = (await ui.client.GET('/v1/sessions/{sessionId}/compactions', { params: { path } })).data!.compactions[0]!;
      // A browser far from UTC, in a zone with a half-hour daylight-saving shift: the page must not show its local time.
      zoned = await ui.browser.newPage({ viewport: PAGE_VIEWPORT, timezoneId: 'Australia/Lord_Howe' });
      await zoned.goto(`${ui.harness.baseUrl}/ui#/`);
      await zoned.evaluate(`sessionStorage.setItem('session-audit.apiKey', ${JSON.stringify(KEY)})`);
    });
    afterAll(async () => {
      await zoned?.close();
    });

    itInPage('the timeline shows each log entry’s recorded time, and the client’s createdAt beside it when that is another instant', async () => {
      await zoned.goto(`${ui.harness.baseUrl}/ui#/s/${sessionId}`);
      await zoned.locator('#timeline li').first().waitFor();
      const rows = log.events.filter((e) => e.type !== 'EventsArchived');
      expect(await zoned.locator('#timeline li').count()).toBe(rows.length);
      for (const [i, entry] of rows.entries()) {
        const row = zoned.locator('#timeline li').nth(i);
        expect(await row.innerText()).toMatch(new RegExp(`^#${entry.revision} (recorded )?${utc(entry.recordedAt).replaceAll('.', '\\.')}`));
        expect(await row.locator('time.recorded').getAttribute('title')).toContain(entry.recordedAt);
      }
      const clientTime = (id: string) => zoned.locator(`#timeline li[data-event="${id}"] time.client-time`);
      expect(await zoned.locator('#timeline li[data-event="u1"] .when').innerText()).toMatch(/^recorded .+, client time 2026-01-01 09:00:00\.000 UTC$/);
      expect(await clientTime('u1').innerText()).toBe('2026-01-01 09:00:00.000 UTC');
      expect(await clientTime('a1').innerText()).toBe('2026-01-01 09:00:05.500 UTC');
      expect(await clientTime('u2').innerText()).toBe('2026-03-08 07:30:00.123 UTC');
      // The tooltip keeps the client's value as the log holds it (its offset and finer digits).
      const u2 = log.events.find((e) => e.eventId === 'u2')!;
      expect(await clientTime('u2').getAttribute('title')).toContain(String((u2.data as { createdAt: string }).createdAt));
      expect(await clientTime('a2').count()).toBe(0);
    });

    // ncaudit56 F1: the list and the details showed `at` (the deciding replica's clock, read before
    // the append), the marker the store's recorded time: typed into "Go to time", the listed time
    // opened the window before the compaction.
    itInPage('the compaction list, the facts and the diff show the whole date and time in UTC: the store’s recorded time, as the timeline marker', async () => {
      const recorded = log.events.find((e) => e.revision === item.revision)!;
      expect([recorded.compactionId, recorded.recordedAt]).toEqual([item.compactionId, item.recordedAt]);
      await zoned.goto(`${ui.harness.baseUrl}/ui#/s/${sessionId}`);
      const row = zoned.locator(`#compactions tr[data-compaction="${item.compactionId}"]`);
      await row.waitFor();
      expect(await row.locator('td').last().innerText()).toBe(utc(item.recordedAt));
      expect(await row.locator('td').last().locator('[title]').first().getAttribute('title')).toBe(
        `decision recorded (store time, recordedAt): ${item.recordedAt}`,
      );
      const heading = zoned.locator('#compactions th').last();
      expect(await heading.innerText()).toMatch(/^recorded \(store time\)$/i);
      expect(await heading.getAttribute('title')).toContain('"Go to time"');
      // The compaction's marker on the timeline shows the same time.
      expect(await zoned.locator(`#timeline li.decision[data-compaction="${item.compactionId}"] time.recorded`).innerText()).toBe(utc(item.recordedAt));
      expect(await zoned.locator('dl.facts').first().innerText()).toContain(`last activity\n${utc(summary.lastActivityAt)}`);
      await row.click();
      await zoned.locator(`#diff[data-compaction="${item.compactionId}"]`).waitFor();
      expect(await zoned.locator('#diff dl.facts').innerText()).toContain(`recorded (store time)\n${utc(item.recordedAt)}`);
      expect(await zoned.locator('#diff dl.facts').innerText()).not.toMatch(/^at$/m);
      // The time shown, typed into "Go to time", goes to the compaction's marker and the window right after it.
      await zoned.locator('#timeline-goto-time input[name=time]').fill(item.recordedAt);
      await zoned.locator('#timeline-goto-time button[type=submit]').click();
      await zoned.locator(`#timeline li.target.decision[data-compaction="${item.compactionId}"]`).waitFor();
      expect(await zoned.locator('#timeline-time-status').innerText()).toBe(`revision ${item.revision}, recorded ${utc(item.recordedAt)}`);
      // Nowhere on the page a time of day without its date and zone.
      const text = await zoned.locator('main').innerText();
      expect(text.match(/\d\d:\d\d:\d\d/g)!.length).toBe(text.match(new RegExp(DATE_TIME, 'g'))!.length);
    });

    itInPage('a recall hit shows its event’s time', async () => {
      await zoned.goto(`${ui.harness.baseUrl}/ui#/s/${sessionId}`);
      await zoned.locator('#recall input[name=recall]').fill('clocks moved');
      await zoned.locator('#recall button[type=submit]').click();
      const hit = zoned.locator('#recall-results li[data-event="u2"]');
      await hit.waitFor();
      expect(await hit.innerText()).toContain('2026-03-08 07:30:00.123 UTC');
    });

    itInPage('the session list shows the last activity’s date and time in UTC', async () => {
      await zoned.goto(`${ui.harness.baseUrl}/ui#/`);
      const cell = zoned.locator(`#sessions tr[data-session="${sessionId}"] td`).last();
      await cell.waitFor();
      expect(await cell.innerText()).toBe(utc(summary.lastActivityAt));
    });
  });

  itInPage('in open mode lists the sessions without asking for a key', async () => {
    const open = await startListeningService();
    try {
      await open
        .client()
        .POST('/v1/sessions/{sessionId}/events', { params: { path: { sessionId: 'open-mode-session' } }, body: { events: [{ type: 'user', text: 'hello' }] } });
      const fresh = await ui.browser.newPage();
      await fresh.goto(`${open.baseUrl}/ui/`);
      await fresh.locator('#sessions tr[data-session="open-mode-session"]').waitFor();
      expect(await fresh.locator('#key-prompt').count()).toBe(0);
      await fresh.close();
    } finally {
      await open.stop();
    }
  });
});
