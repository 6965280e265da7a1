/**
 * Debian's Chromium for the browser specs (`/usr/bin/chromium`, or `CHROMIUM_PATH`), driven by
 * playwright-core with the flags this machine needs (no sandbox as root, no background network:
 * the machine's closed network refuses it). A suite without Chromium skips with one line.
 */
import * as fs from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { describeWithShared } from './shared-dir';

/** Where the browser is. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
];

/** True when the browser is installed. */
export function hasChromium(): boolean {
  return fs.existsSync(CHROMIUM);
}

/** Writes the one line saying why a browser suite is skipped. */
export function reportNoChromium(title: string): void {
  process.stderr.write(`skipped "${title}": no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)\n`);
}

/** Starts a headless browser. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
}

/** The viewport of the browser specs' pages (CSS px). */
export const PAGE_VIEWPORT = { width: 1440, height: 1000 };

/** Starts a headless browser ({@link launchChromium}) and opens one page of {@link PAGE_VIEWPORT}. */
export async function launchChromiumPage(): Promise<{ browser: Browser; page: Page }> {
  const browser = await launchChromium();
  return { browser, page: await browser.newPage({ viewport: PAGE_VIEWPORT }) };
}

/**
 * `describe(title, fn)` when Chromium is installed (with `sharedFile` before `fn`: through
 * {@link describeWithShared}, for a suite that also needs that file of the shared folder), else
 * one line ({@link reportNoChromium}) and the suite skipped, its title saying why.
 */
export function describeWithChromium(title: string, ...rest: [fn: () => void] | [sharedFile: string, fn: () => void]): void {
  const fn = rest.length === 1 ? rest[0] : rest[1];
  if (!hasChromium()) {
    reportNoChromium(title);
    describe.skip(`${title} (skipped: no Chromium)`, fn);
  } else if (rest.length === 2) describeWithShared(title, rest[0], fn);
  else describe(title, fn);
}

/**
 * Playwright's words for a call on a page whose renderer (tab) process died under it: `Target
 * crashed` (the call in flight) and `Page crashed` (a navigation).
 */
const RENDERER_CRASHED = /\b(?:Target|Page) crashed\b/;

/** True when `error` is Playwright's report of a renderer that crashed ({@link RENDERER_CRASHED}). */
export function isRendererCrash(error: unknown): boolean {
  return RENDERER_CRASHED.test(error instanceof Error ? error.message : String(error));
}

/**
 * Runs `attempt`; when Chromium's renderer process crashed under it (a browser fault: seen once in
 * CI, in a test that passed in every other run, Chromium 156), writes one line to stderr naming
 * the test, calls `reopen` (which replaces the spec's page with a new one) and runs `attempt` once
 * more. Any other failure, and a second crash, rejects with that attempt's error; so does a
 * failing `reopen`.
 * @param testName the test's title, for the stderr line.
 */
export async function runRerunningOnRendererCrash(testName: string, attempt: () => Promise<void>, reopen: () => Promise<void>): Promise<void> {
  try {
    await attempt();
    return;
  } catch (error) {
    if (!isRendererCrash(error)) throw error;
    const first = (error instanceof Error ? error.message : String(error)).split('\n')[0];
    process.stderr.write(`Chromium's renderer crashed during "${testName}" (${first}): running it once more on a new page\n`);
  }
  await reopen();
  await attempt();
}

/**
 * A jest `it` for a browser spec whose tests share one page: each test runs through
 * {@link runRerunningOnRendererCrash}, so a renderer crash costs a rerun on a new page (made by
 * `reopen`) instead of failing that test and every later one on the dead page. `timeoutMs` is
 * jest's timeout for the test and its rerun together (default the project's).
 */
export function itRerunOnRendererCrash(reopen: () => Promise<void>): (name: string, fn: () => Promise<void>, timeoutMs?: number) => void {
  return (name, fn, timeoutMs) => it(name, () => runRerunningOnRendererCrash(name, fn, reopen), timeoutMs);
}

/** Closes `page` (ignoring a close that fails: it may have crashed) and opens a new one of {@link PAGE_VIEWPORT} in `browser`. */
export async function replacePage(browser: Browser, page: Page | undefined): Promise<Page> {
  await page?.close().catch(() => undefined);
  return browser.newPage({ viewport: PAGE_VIEWPORT });
}

/**
 * Waits until the JavaScript `expression` is truthy in `page`, polling every 50 ms up to `timeoutMs`
 * (default 5,000 ms). Each look goes through `page.evaluate` (the DevTools protocol, which the
 * page's Content-Security-Policy does not govern); Playwright's `waitForFunction` with a string
 * evaluates it inside the page with `eval`, which /ui's CSP (no `unsafe-eval`) refuses as soon as
 * the first look is false.
 * @throws Error naming the expression when it is still falsy at the deadline.
 */
export async function waitInPage(page: Page, expression: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await page.evaluate(expression))) {
    if (Date.now() > deadline) throw new Error(`still false after ${timeoutMs} ms in the page: ${expression}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
