/**
 * The browser specs' guard against a renderer crash (test/support/chromium.ts,
 * `runRerunningOnRendererCrash`): a test under which Chromium's renderer process really crashes
 * (`chrome://crash`) runs once more on a new page and its second run's result counts; any other
 * failure, and a second crash, fail it at once. Runs in a few seconds.
 */
import type { Browser, Page } from 'playwright-core';
import { describeWithChromium, isRendererCrash, launchChromiumPage, replacePage, runRerunningOnRendererCrash } from '../support/chromium';

describeWithChromium('a renderer crash under a browser test', () => {
  let browser: Browser;
  let page: Page;
  let reopened = 0;
  const reopen = async (): Promise<void> => {
    reopened++;
    page = await replacePage(browser, page);
  };
  /** Crashes the current page's renderer, then makes a call on it (which fails as a crash). */
  const crashPage = async (): Promise<void> => {
    await page.goto('chrome://crash').catch(() => undefined);
    await page.evaluate('1');
  };
  let stderrWrite: jest.SpyInstance;

  beforeAll(async () => {
    ({ browser, page } = await launchChromiumPage());
  });
  beforeEach(() => {
    reopened = 0;
    stderrWrite = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
  });
  afterEach(() => stderrWrite.mockRestore());
  afterAll(async () => {
    await browser?.close();
  });

  it('reports a call on a crashed page as a renderer crash, and other errors not', async () => {
    const crashed = await crashPage().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isRendererCrash(crashed)).toBe(true);
    expect(isRendererCrash(new Error('locator.waitFor: Timeout 30000ms exceeded.'))).toBe(false);
    page = await replacePage(browser, page);
  });

  it('runs a test whose first run crashed the renderer once more, on a new page, and says so on stderr', async () => {
    const runs: string[] = [];
    await runRerunningOnRendererCrash(
      'a crashing test',
      async () => {
        runs.push(runs.length === 0 ? 'first' : 'second');
        if (runs.length === 1) await crashPage();
        await page.setContent('<p id="greeting">still here</p>');
        expect(await page.locator('#greeting').innerText()).toBe('still here');
      },
      reopen,
    );
    expect(runs).toEqual(['first', 'second']);
    expect(reopened).toBe(1);
    const lines = stderrWrite.mock.calls.map(([text]) => String(text));
    expect(lines).toEqual([expect.stringMatching(/^Chromium's renderer crashed during "a crashing test" \(page\.evaluate: Target crashed/)]);
  });

  it('fails a test at once, without a rerun, for any other error', async () => {
    let runs = 0;
    const failing = runRerunningOnRendererCrash(
      'a failing test',
      async () => {
        runs++;
        await page.setContent('<p>one</p>');
        expect(await page.locator('p').innerText()).toBe('two');
      },
      reopen,
    );
    await expect(failing).rejects.toThrow(/toBe/);
    expect({ runs, reopened }).toEqual({ runs: 1, reopened: 0 });
    expect(stderrWrite).not.toHaveBeenCalled();
  });

  it('fails a test whose rerun crashes too, with the second crash', async () => {
    let runs = 0;
    const crashing = runRerunningOnRendererCrash(
      'a test that always crashes',
      async () => {
        runs++;
        await crashPage();
      },
      reopen,
    );
    await expect(crashing).rejects.toThrow(/Target crashed/);
    expect({ runs, reopened }).toEqual({ runs: 2, reopened: 1 });
    page = await replacePage(browser, page);
  });
});
