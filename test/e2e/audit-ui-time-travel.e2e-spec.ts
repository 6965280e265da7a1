/**
 * The audit page's "Go to time" (next to "Go to revision" in the timeline's pager) in a real
 * browser against a real service: a time is resolved by the service's time travel
 * (`GET …/window?atTime=`, the one rule), the timeline turns to the resolved revision's row
 * (marked `target`) and the status names the revision and its recorded time; a time before the
 * session's first event shows the service's `time_out_of_range` message in place, the row marked
 * before unmarked; a time the service refuses with advice on what to fix (its `dateTimeFix`: a day
 * its month lacks, with or without an offset) shows that advice, its `%2B` written `+` as typed in
 * the box; an event written after the page was read marks no row: the status says so and
 * its "read again and go to it" reads the page again, marking that event's row. A notice reads `notice`, and the
 * window at a revision names the stored system messages `system · pinned` and `system · superseded` (ncaudit66 F2).
 * Runs in a few seconds.
 */
import { describeWithChromium, waitInPage } from '../support/chromium';
import { useAuditPage } from '../support/audit-page';
import { dateTimeFix } from '../../apps/session-service/src/http/request-schemas';

/** Events per append: two appends make more rows than one timeline page (200), so the pager shows. */
const PER_APPEND = 150;

describeWithChromium('audit page in a browser: go to a time', () => {
  const ui = useAuditPage();
  const { itInPage } = ui;
  const sessionId = 'ui-at-time';
  let recorded: Map<string, string>;

  const append = async (from: number) => {
    const events = Array.from({ length: PER_APPEND }, (_, i) => ({ id: `e${from + i}`, type: 'user' as const, text: `event ${from + i}` }));
    const { response } = await ui.client.POST('/v1/sessions/{sessionId}/events', { params: { path: { sessionId } }, body: { events } });
    expect(response.status).toBe(201);
  };

  beforeAll(async () => {
    await append(0);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await append(PER_APPEND);
    const { data } = await ui.client.GET('/v1/sessions/{sessionId}/events', { params: { path: { sessionId }, query: { limit: 1000 } } });
    recorded = new Map(data!.events.map((e) => [e.revision, e.recordedAt]));
  }, 120_000);

  itInPage('turns to the last event recorded at or before the time, naming its revision and recorded time', async () => {
    const last = String(PER_APPEND - 1);
    expect(recorded.get(last)! < recorded.get(String(PER_APPEND))!).toBe(true);
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${sessionId}`);
    await ui.page.locator('#timeline-goto-time').waitFor();
    // The page opens on the first 200 rows: the time's row (revision 149) is on it, so go to the last page first.
    await ui.page.locator('#timeline-last').click();
    await ui.page.locator(`#timeline li[data-event="e${2 * PER_APPEND - 1}"]`).waitFor();
    await ui.page.locator('#timeline-goto-time input[name=time]').fill(recorded.get(last)!);
    await ui.page.locator('#timeline-goto-time button[type=submit]').click();
    await ui.page.locator(`#timeline li.target[data-event="e${last}"]`).waitFor();
    const status = await ui.page.locator('#timeline-time-status').innerText();
    expect(status).toBe(`revision ${last}, recorded ${recorded.get(last)!.replace('T', ' ').replace('Z', ' UTC')}`);
  });

  itInPage("shows the service's refusal in place for a time before the session's first event", async () => {
    // the window of the time gone to in the test before is open
    await ui.page.locator('#window-at-heading', { hasText: `Window at revision ${PER_APPEND - 1}` }).waitFor();
    const before = new Date(Date.parse(recorded.get('0')!) - 1).toISOString();
    await ui.page.locator('#timeline-goto-time input[name=time]').fill(before);
    await ui.page.locator('#timeline-goto-time button[type=submit]').click();
    await ui.page.locator('#timeline-time-status', { hasText: 'time_out_of_range' }).waitFor();
    // The row the previous time went to is no longer marked: no row is this time's; nor is its window (newcomer ncaudit64 F8).
    expect(await ui.page.locator('#timeline li.target').count()).toBe(0);
    expect(await ui.page.locator('#window-at-heading').innerText()).toBe('Window at a revision');
    expect(await ui.page.locator('#window-at-close').isHidden()).toBe(true);
    expect(await ui.page.locator('#timeline-time-status').innerText()).toBe(
      `atTime: the session's first event (revision 0) was recorded at ${recorded.get('0')}, after ${before}: no window existed yet; ask for a time at or after it (400 time_out_of_range); "Go to time" goes by the store's recorded time, not the client time a row shows`,
    );
    // ncsupport F4: the box says which clock it goes by.
    expect(await ui.page.getByLabel('Go to time (store time, recordedAt)').count()).toBe(1);
    expect(await ui.page.locator('#timeline-time-clock').innerText()).toContain('not the client time');
    // so does a revision past the end, after one whose window opened (newcomer ncrecheck64 F4)
    await ui.page.locator('#timeline-goto input[name=revision]').fill('1');
    await ui.page.locator('#timeline-goto button[type=submit]').click();
    await ui.page.locator('#window-at-heading', { hasText: 'Window at revision 1' }).waitFor();
    await ui.page.locator('#timeline-goto input[name=revision]').fill('99999');
    await ui.page.locator('#timeline-goto button[type=submit]').click();
    await ui.page.locator('#window-at-heading', { hasText: 'Window at a revision' }).waitFor();
    expect(await ui.page.locator('#window-at-close').isHidden()).toBe(true);
    // a revision of 20 digits is named as asked, not rounded as a float (newcomer ncui69 F10)
    await ui.page.locator('#timeline-goto input[name=revision]').fill('99999999999999999999');
    await ui.page.locator('#timeline-goto button[type=submit]').click();
    await ui.page.locator('#timeline-goto-status', { hasText: /revision \d{20,} is past/ }).waitFor();
    expect(await ui.page.locator('#timeline-goto-status').innerText()).toBe(
      `revision 99999999999999999999 is past the end of this timeline (its last row is revision ${2 * PER_APPEND - 1}): no row marked`,
    );
  });

  /** Types `typed` in "Go to time" and answers the status once the service answered. */
  const ask = async (typed: string) => {
    await ui.page.locator('#timeline-goto-time input[name=time]').fill(typed);
    await ui.page.locator('#timeline-goto-time button[type=submit]').click();
    // The status says "resolving…" from the click until the answer.
    await waitInPage(ui.page, "!/resolving/.test(document.querySelector('#timeline-time-status')?.textContent ?? 'resolving')");
    return ui.page.locator('#timeline-time-status').innerText();
  };

  itInPage('answers a time the box cannot send with what to type in the box, not how to encode a query string', async () => {
    const hint = (typed: string) =>
      `atTime: "${typed}" is not a date-time the service reads: type it with its date, time and zone, e.g. 2026-01-31T12:00:00Z (UTC) or 2026-01-31T17:30:00+05:30 (type the "+" itself) (400 validation_failed)`;
    // The service's message for these names no fault but says to send "+" as %2B (the query string's): the box sends a typed "+" itself.
    // A space typed where the "+" goes gets the same hint (the service's advice is to send it as %2B).
    for (const typed of ['2026-12-03T10:00:00%2B05:30', 'yesterday', '2026-12-03T10:00:00 05:30']) expect(await ask(typed)).toBe(hint(typed));
    // Advice without %2B is the service's own.
    expect(await ask('2026-12-03 10:00:00Z')).toBe(
      'atTime: must be an ISO-8601 date-time: write a "T" between date and time, not a space (e.g. 2026-12-03T10:00:00Z) (400 validation_failed)',
    );
    // What the hint says to type is read.
    const last = recorded.get(String(2 * PER_APPEND - 1))!;
    const inKolkata = new Date(Date.parse(last) + 5.5 * 3600_000).toISOString().replace('Z', '+05:30');
    await ui.page.locator('#timeline-goto-time input[name=time]').fill(inKolkata);
    await ui.page.locator('#timeline-goto-time button[type=submit]').click();
    await ui.page.locator('#timeline-time-status', { hasText: `revision ${2 * PER_APPEND - 1}, recorded` }).waitFor();
  });

  itInPage("shows the service's advice on what to fix in the time typed, with or without an offset, its + as typed in the box", async () => {
    // An impossible day with an offset: the service's own advice (dateTimeFix, the one rule), not the box's general hint.
    expect(await ask('2026-02-30T10:00:00+02:00')).toBe(
      'atTime: must be an ISO-8601 date-time: there is no day 30 in February 2026 (it has 28 days) (e.g. 2026-02-28T10:00:00+02:00) (400 validation_failed)',
    );
    // Every fix the service names reaches the box, "+" written as typed: what dateTimeFix answers for a "+" sent as itself.
    for (const typed of [
      '2026-12-03T10:00:00',
      '2026-12-03T25:00:00+05:30',
      '2026-13-03T10:00:00-03:00',
      '2026-12-03T10:00+05:30',
      '2026-12-03T10:00:00+0530',
      '2026-12-03+05:30',
      '2026-02-29t10:00:00z',
      '2026-12-03 10:00',
    ]) {
      const fix = dateTimeFix(typed);
      expect(fix).toBeDefined();
      expect(await ask(typed)).toBe(`atTime: ${fix} (400 validation_failed)`);
    }
    expect(await ui.page.locator('#timeline li.target').count()).toBe(0);
  });

  itInPage('marks no row for an event written after the page was read: says so, and reading again goes to its row', async () => {
    // One append's events share their recorded time: it goes to the append's last.
    await ui.page.locator('#timeline-goto-time input[name=time]').fill(recorded.get(String(PER_APPEND - 1))!);
    await ui.page.locator('#timeline-goto-time button[type=submit]').click();
    await ui.page.locator(`#timeline li.target[data-event="e${PER_APPEND - 1}"]`).waitFor();
    const { response } = await ui.client.POST('/v1/sessions/{sessionId}/events', {
      params: { path: { sessionId } },
      body: { events: [{ id: 'late', type: 'user', text: 'written after the page was read' }] },
    });
    expect(response.status).toBe(201);
    const { data } = await ui.client.GET('/v1/sessions/{sessionId}/events', {
      params: { path: { sessionId }, query: { fromRevision: String(2 * PER_APPEND) } },
    });
    const late = data!.events[0];
    expect(late).toMatchObject({ eventId: 'late', revision: String(2 * PER_APPEND) });
    const shown = `revision ${late.revision}, recorded ${late.recordedAt.replace('T', ' ').replace('Z', ' UTC')}`;
    await ui.page.locator('#timeline-goto-time input[name=time]').fill(late.recordedAt);
    await ui.page.locator('#timeline-goto-time button[type=submit]').click();
    await ui.page.locator('#timeline-time-reread').waitFor();
    expect(await ui.page.locator('#timeline-time-status').innerText()).toBe(
      `${shown}: not on this page, which shows the session as of revision ${2 * PER_APPEND - 1} (written after it was read): read again and go to it`,
    );
    // Not the last row on the page (the event before it), nor the row marked before.
    expect(await ui.page.locator('#timeline li.target').count()).toBe(0);
    await ui.page.locator('#timeline-time-reread').click();
    await ui.page.locator('#timeline li.target[data-event="late"]').waitFor();
    expect(await ui.page.locator('#timeline li.target').count()).toBe(1);
    expect(await ui.page.locator('#timeline-time-status').innerText()).toBe(shown);
    expect(await ui.page.locator('#as-of').innerText()).toContain(`As of revision ${late.revision},`);
  });

  // newcomer ncui69 F7: Back to the plain session link kept "Window at revision 3" and its marks.
  itInPage('shows the plain session link, reached by Back, as a fresh load does; the details’ Close keeps the window gone to', async () => {
    const backSession = 'ui-back-plain';
    const events = Array.from({ length: 6 }, (_, i) => ({ id: `b${i}`, type: i % 2 ? ('assistant' as const) : ('user' as const), text: `turn ${i}` }));
    await ui.client.POST('/v1/sessions/{sessionId}/events', { params: { path: { sessionId: backSession } }, body: { events } });
    const { data } = await ui.client.POST('/v1/sessions/{sessionId}/compactions', {
      params: { path: { sessionId: backSession } },
      body: { strategy: { type: 'sliding-window', maxEvents: 2 } },
    });
    expect(data!.archived).toContain('b0');
    const plain = `#/s/${backSession}`;
    await ui.page.goto(`${ui.harness.baseUrl}/ui${plain}`);
    await ui.page.locator('#timeline li[data-event="b5"]').waitFor();
    const fresh = {
      heading: await ui.page.locator('#window-at-heading').innerText(),
      marks: await ui.page.locator('#timeline-marks').innerText(),
      archivedBy: await ui.page.locator('#timeline li[data-event="b0"] .archived-by').isVisible(),
    };
    expect(fresh).toEqual({ heading: 'Window at a revision', marks: expect.stringContaining("the page's revision") as unknown, archivedBy: true });
    await ui.page.evaluate(`location.hash = ${JSON.stringify(`${plain}/r/3`)}`);
    await ui.page.locator('#window-at-heading', { hasText: 'Window at revision 3' }).waitFor();
    await ui.page.locator('#timeline li[data-event="b0"] .archived-later').waitFor();
    await ui.page.locator('#compactions a.open').first().click();
    await ui.page.locator(`#diff[data-compaction="${data!.compactionId}"]`).waitFor();
    await ui.page.goBack();
    await waitInPage(ui.page, `location.hash === ${JSON.stringify(`${plain}/r/3`)}`);
    await ui.page.goBack();
    await waitInPage(ui.page, `location.hash === ${JSON.stringify(plain)}`);
    await ui.page.locator('#window-at-heading', { hasText: 'Window at a revision' }).waitFor({ timeout: 5_000 });
    expect({
      heading: await ui.page.locator('#window-at-heading').innerText(),
      marks: await ui.page.locator('#timeline-marks').innerText(),
      archivedBy: await ui.page.locator('#timeline li[data-event="b0"] .archived-by').isVisible(),
    }).toEqual(fresh);
    expect(await ui.page.locator('#timeline li.target, #timeline li.after-view, #timeline .archived-later').count()).toBe(0);
    expect(await ui.page.locator('#timeline-goto-status').innerText()).toBe('');
    expect(await ui.page.locator('#timeline-goto input[name=revision]').inputValue()).toBe('');
    // Gone to on the page itself, a revision's window stays when the details opened after it are closed.
    await ui.page.locator('#timeline-goto input[name=revision]').fill('3');
    await ui.page.locator('#timeline-goto button[type=submit]').click();
    await ui.page.locator('#window-at-heading', { hasText: 'Window at revision 3' }).waitFor();
    await ui.page.locator('#compactions a.open').first().click();
    await ui.page.locator('#diff-close').click();
    await waitInPage(ui.page, `location.hash === ${JSON.stringify(plain)} && !document.querySelector('#diff')`);
    expect(await ui.page.locator('#window-at-heading').innerText()).toBe('Window at revision 3');
    expect(await ui.page.locator('#timeline li[data-event="b0"] .archived-later').count()).toBe(1);
  });

  // newcomer ncaudit66 F2: a notice, the pinned and a superseded system message all read "system"
  describe('notices, the pinned and the superseded system message', () => {
    const kindsSession = 'ui-system-kinds';
    /** The kind each row of `list` shows, by its event id, as written (the page shows it in capitals), and its tooltip. */
    const kinds = (list: string) =>
      ui.page.$$eval(`${list} li[data-event]`, (rows) =>
        rows.map((row) => [
          row.getAttribute('data-event'),
          row.querySelector('.kind')?.textContent ?? null,
          row.querySelector('.kind')?.getAttribute('title') ?? null,
        ]),
      );

    itInPage('labels the notice on the timeline, and nothing else differently', async () => {
      const events = [
        { id: 'prompt-old', type: 'system' as const, text: 'You are a filing assistant.' },
        { id: 'hello', type: 'user' as const, text: 'Hello' },
        { id: 'arrived', type: 'system' as const, text: 'File arrived: report.pdf', notice: true },
        { id: 'prompt-new', type: 'system' as const, text: 'You are a careful filing assistant.' },
        { id: 'asked', type: 'user' as const, text: 'File it please' },
      ];
      const { response } = await ui.client.POST('/v1/sessions/{sessionId}/events', { params: { path: { sessionId: kindsSession } }, body: { events } });
      expect(response.status).toBe(201);
      await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${kindsSession}`);
      await ui.page.locator('#timeline li[data-event="asked"]').waitFor();
      const rows = new Map((await kinds('#timeline')).map(([id, kind]) => [id, kind]));
      expect(Object.fromEntries(rows)).toEqual({ 'prompt-old': 'system', hello: 'user', arrived: 'notice', 'prompt-new': 'system', asked: 'user' });
    });

    itInPage('names the pinned and the superseded system message and the notice in the window at a revision, as the model gets them', async () => {
      await ui.page.locator('#timeline-goto input[name=revision]').fill('4');
      await ui.page.locator('#timeline-goto button[type=submit]').click();
      await ui.page.locator('#window-at-heading', { hasText: 'Window at revision 4' }).waitFor();
      await ui.page.locator('#window-at-list li[data-event="asked"]').waitFor();
      const rows = await kinds('#window-at-list');
      expect(rows.map(([id, kind]) => [id, kind])).toEqual([
        ['prompt-old', 'system · superseded'],
        ['hello', 'user'],
        ['arrived', 'notice'],
        ['prompt-new', 'system · pinned'],
        ['asked', 'user'],
      ]);
      expect(rows[0][2]).toMatch(/not sent to the model/);
      expect(rows[3][2]).toMatch(/the model gets first/);
      // The service's OpenAI rendering of the same window agrees: the pinned message first, the superseded one not sent.
      const { data } = await ui.client.GET('/v1/sessions/{sessionId}/window', { params: { path: { sessionId: kindsSession }, query: { format: 'openai' } } });
      const messages = (data as { messages: Array<{ role: string; content: unknown; name?: string }> }).messages;
      expect(messages.map((m) => [m.role, m.content, m.name])).toEqual([
        ['system', 'You are a careful filing assistant.', undefined],
        ['user', 'Hello', undefined],
        ['system', 'File arrived: report.pdf', 'notice'],
        ['user', 'File it please', undefined],
      ]);
    });
  });
});
