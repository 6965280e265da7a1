/**
 * The audit page's "Go to time" (next to "Go to revision" in the timeline's pager) in a real
 * browser against a real service: a time is resolved by the service's time travel
 * (`GET …/window?atTime=`, the one rule), the timeline turns to the resolved revision's row
 * (marked `target`) and the status names the revision and its recorded time; a time before the
 * session's first event shows the service's `time_out_of_range` message in place. Runs in a few seconds.
 */
import type { Browser, Page } from 'playwright-core';
import type { SessionServiceClient } from '@lib/client';
import { startListeningService, type ClientHarness } from '../support/client-harness';
import { describeWithChromium, launchChromiumPage } from '../support/chromium';

/** Events per append: two appends make more rows than one timeline page (200), so the pager shows. */
const PER_APPEND = 150;

describeWithChromium('audit page in a browser: go to a time', () => {
  let harness: ClientHarness;
  let client: SessionServiceClient;
  let browser: Browser;
  let page: Page;
  const sessionId = 'ui-at-time';
  let recorded: Map<string, string>;

  const append = async (from: number) => {
    const events = Array.from({ length: PER_APPEND }, (_, i) => ({ id: `e${from + i}`, type: 'user' as const, text: `event ${from + i}` }));
    const { response } = await client.POST('/v1/sessions/{sessionId}/events', { params: { path: { sessionId } }, body: { events } });
    expect(response.status).toBe(201);
  };

  beforeAll(async () => {
    harness = await startListeningService();
    client = harness.client();
    await append(0);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await append(PER_APPEND);
    const { data } = await client.GET('/v1/sessions/{sessionId}/events', { params: { path: { sessionId }, query: { limit: 1000 } } });
    recorded = new Map(data!.events.map((e) => [e.revision, e.recordedAt]));
    ({ browser, page } = await launchChromiumPage());
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await harness?.stop();
  });

  it('turns to the last event recorded at or before the time, naming its revision and recorded time', async () => {
    const last = String(PER_APPEND - 1);
    expect(recorded.get(last)! < recorded.get(String(PER_APPEND))!).toBe(true);
    await page.goto(`${harness.baseUrl}/ui#/s/${sessionId}`);
    await page.locator('#timeline-goto-time').waitFor();
    // The page opens on the first 200 rows: the time's row (revision 149) is on it, so go to the last page first.
    await page.locator('#timeline-last').click();
    await page.locator(`#timeline li[data-event="e${2 * PER_APPEND - 1}"]`).waitFor();
    await page.locator('#timeline-goto-time input[name=time]').fill(recorded.get(last)!);
    await page.locator('#timeline-goto-time button[type=submit]').click();
    await page.locator(`#timeline li.target[data-event="e${last}"]`).waitFor();
    const status = await page.locator('#timeline-time-status').innerText();
    expect(status).toBe(`revision ${last}, recorded ${recorded.get(last)!.replace('T', ' ').replace('Z', ' UTC')}`);
  });

  it("shows the service's refusal in place for a time before the session's first event", async () => {
    const before = new Date(Date.parse(recorded.get('0')!) - 1).toISOString();
    await page.locator('#timeline-goto-time input[name=time]').fill(before);
    await page.locator('#timeline-goto-time button[type=submit]').click();
    await page.locator('#timeline-time-status', { hasText: 'time_out_of_range' }).waitFor();
    expect(await page.locator('#timeline-time-status').innerText()).toBe(
      `atTime: the session's first event (revision 0) was recorded at ${recorded.get('0')}, after ${before}: no window existed yet; ask for a time at or after it (400 time_out_of_range)`,
    );
  });
});
