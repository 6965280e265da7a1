/**
 * The audit page's first load with API keys configured, in Chromium (operator finding): the page read
 * `/v1/sessions` without a key to learn that it needs one, so every first visit logged a failed request
 * (`401 Unauthorized`) in the browser's console. It now learns it from `/health` (open without a key)
 * and shows the key prompt without a request the service refuses; with the key entered, the session
 * list loads, still without a console error or a failed request. Runs in a few seconds.
 */
import type { Browser, Page } from 'playwright-core';
import { startListeningService, type ClientHarness } from '../support/client-harness';
import { describeWithChromium, launchChromium, PAGE_VIEWPORT } from '../support/chromium';

const KEY = 'first-load-key-tenant-a';
const SESSION = 'first-load-session';

/** What `page` shows of trouble from now on: console errors, answers with an error status, requests that got no answer. */
function collectTrouble(page: Page): string[] {
  const seen: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') seen.push(`console error: ${message.text()}`);
  });
  page.on('pageerror', (error) => seen.push(`page error: ${error.message}`));
  page.on('response', (response) => {
    if (response.status() >= 400) seen.push(`${response.status()} ${response.request().method()} ${response.url()}`);
  });
  page.on('requestfailed', (request) => seen.push(`failed ${request.method()} ${request.url()}: ${request.failure()?.errorText}`));
  return seen;
}

describeWithChromium('the audit page’s first load with API keys', () => {
  let harness: ClientHarness;
  let browser: Browser;

  beforeAll(async () => {
    harness = await startListeningService({ env: { API_KEYS: `${KEY}:tenantA` } });
    const appended = await harness
      .client(KEY)
      .POST('/v1/sessions/{sessionId}/events', { params: { path: { sessionId: SESSION } }, body: { events: [{ type: 'user', text: 'hello' }] } });
    expect(appended.response.status).toBe(201);
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await harness?.stop();
  });

  it('shows the key prompt without a request answered 401 or any console error, then lists the sessions with the key', async () => {
    // A new context: no key in sessionStorage, nothing cached, as on a first visit.
    const context = await browser.newContext({ viewport: PAGE_VIEWPORT });
    try {
      const page = await context.newPage();
      const trouble = collectTrouble(page);
      const v1Reads: string[] = [];
      page.on('request', (request) => {
        if (new URL(request.url()).pathname.startsWith('/v1/')) v1Reads.push(request.url());
      });
      await page.goto(`${harness.baseUrl}/ui/`);
      await page.locator('#key-prompt').waitFor();
      expect(await page.locator('#key-prompt').innerText()).toContain('This service needs an API key. Enter one of');
      expect(await page.locator('#mode').innerText()).toBe('api-keys');
      // Give a late read (one the page would still send) the time to show.
      await page.waitForTimeout(300);
      expect(trouble).toEqual([]);
      expect(v1Reads).toEqual([]);

      await page.locator('#key-prompt input[name=apiKey]').fill(KEY);
      await page.locator('#key-prompt button[type=submit]').click();
      await page.locator(`#sessions tr[data-session="${SESSION}"]`).waitFor();
      expect(trouble).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
