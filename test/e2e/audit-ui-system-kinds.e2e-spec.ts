/**
 * The audit page names what kind of system event each is (newcomer ncaudit66 F2): a notice (DESIGN §3.1, a message
 * injected into the conversation and sent in its place) reads `notice` on the timeline and in the window at a
 * revision; in that window the stored system messages read `system · pinned` (the latest: the model gets it first)
 * and `system · superseded` (a newer one replaced it: not sent, archived by the next pass), as the service's own
 * OpenAI rendering of the same window shows (the pinned one first, the superseded one absent). All three read
 * "system" before, so an auditor could not tell which one the model got. Runs in a few seconds.
 */
import type { Browser, Page } from 'playwright-core';
import type { SessionServiceClient } from '@lib/client';
import { startListeningService, type ClientHarness } from '../support/client-harness';
import { describeWithChromium, launchChromiumPage, itRerunOnRendererCrash, replacePage } from '../support/chromium';

describeWithChromium('audit page in a browser: notices, the pinned and superseded system messages', () => {
  let harness: ClientHarness;
  let client: SessionServiceClient;
  let browser: Browser;
  let page: Page;
  const itInPage = itRerunOnRendererCrash(async () => {
    page = await replacePage(browser, page);
  });
  const sessionId = 'ui-system-kinds';

  beforeAll(async () => {
    harness = await startListeningService();
    client = harness.client();
    const events = [
      { id: 'prompt-old', type: 'system' as const, text: 'You are a filing assistant.' },
      { id: 'hello', type: 'user' as const, text: 'Hello' },
      { id: 'arrived', type: 'system' as const, text: 'File arrived: report.pdf', notice: true },
      { id: 'prompt-new', type: 'system' as const, text: 'You are a careful filing assistant.' },
      { id: 'asked', type: 'user' as const, text: 'File it please' },
    ];
    const { response } = await client.POST('/v1/sessions/{sessionId}/events', { params: { path: { sessionId } }, body: { events } });
    expect(response.status).toBe(201);
    ({ browser, page } = await launchChromiumPage());
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await harness?.stop();
  });

  /** The kind each row of `list` shows, by its event id, as written (the page shows it in capitals). */
  const kinds = (list: string) =>
    page.$$eval(`${list} li[data-event]`, (rows) =>
      rows.map((row) => [
        row.getAttribute('data-event'),
        row.querySelector('.kind')?.textContent ?? null,
        row.querySelector('.kind')?.getAttribute('title') ?? null,
      ]),
    );

  itInPage('labels the notice on the timeline, and nothing else differently', async () => {
    await page.goto(`${harness.baseUrl}/ui#/s/${sessionId}`);
    await page.locator('#timeline li[data-event="asked"]').waitFor();
    const rows = new Map((await kinds('#timeline')).map(([id, kind]) => [id, kind]));
    expect(Object.fromEntries(rows)).toEqual({ 'prompt-old': 'system', hello: 'user', arrived: 'notice', 'prompt-new': 'system', asked: 'user' });
  });

  itInPage('names the pinned and the superseded system message and the notice in the window at a revision, as the model gets them', async () => {
    await page.locator('#timeline-goto input[name=revision]').fill('4');
    await page.locator('#timeline-goto button[type=submit]').click();
    await page.locator('#window-at-heading', { hasText: 'Window at revision 4' }).waitFor();
    await page.locator('#window-at-list li[data-event="asked"]').waitFor();
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
    const { data } = await client.GET('/v1/sessions/{sessionId}/window', { params: { path: { sessionId }, query: { format: 'openai' } } });
    const messages = (data as { messages: Array<{ role: string; content: unknown; name?: string }> }).messages;
    expect(messages.map((m) => [m.role, m.content, m.name])).toEqual([
      ['system', 'You are a careful filing assistant.', undefined],
      ['user', 'Hello', undefined],
      ['system', 'File arrived: report.pdf', 'notice'],
      ['user', 'File it please', undefined],
    ]);
  });
});
