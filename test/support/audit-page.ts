/**
 * The shared set-up of the browser specs of the audit page: a listening service with its typed
 * client, and Chromium with one page, for the tests of one `describe`.
 */
import * as fs from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import type { SessionServiceClient } from '@lib/client';
import type { HarnessOptions } from './service-harness';
import { startListeningService, type ClientHarness } from './client-harness';
import { itRerunOnRendererCrash, launchChromiumPage, replacePage } from './chromium';

/** Options of {@link useAuditPage}: the service's ({@link startListeningService}) plus the client's key. */
export interface AuditPageOptions extends HarnessOptions {
  /** The key {@link AuditPageInUse.client} sends (none by default). */
  apiKey?: string;
}

/** What {@link useAuditPage} set up; its getters answer inside tests and later hooks only. */
export interface AuditPageInUse {
  /** The service (the one given to {@link replaceHarness} once it was called). */
  readonly harness: ClientHarness;
  /** A typed client of the service, sending `apiKey` when given. */
  readonly client: SessionServiceClient;
  readonly browser: Browser;
  /** The page the tests share (a new one after a renderer crash: read it again in each test). */
  readonly page: Page;
  /** This suite's `it` ({@link itRerunOnRendererCrash}): a test under which Chromium's renderer crashed runs once more, on a new page. */
  readonly itInPage: (name: string, fn: () => Promise<void>, timeoutMs?: number) => void;
  /** Stops the service; the `afterAll` then does not stop it again (it still removes its data directory). */
  stopService(): Promise<void>;
  /**
   * Makes `next` the suite's service (e.g. started again on the same data directory and port after
   * {@link stopService}); the `afterAll` stops it. {@link client} stays the one made at the start.
   */
  replaceHarness(next: ClientHarness): void;
}

/**
 * Registers in the enclosing `describe` (call it inside `describeWithChromium`):
 * - a `beforeAll` (timeout 120 s) that starts the service ({@link startListeningService} with
 *   `options`, on a new temporary data directory unless `options.dataDir` is given) and then
 *   Chromium with one page ({@link launchChromiumPage});
 * - an `afterAll` that closes the browser, stops the service (unless {@link AuditPageInUse.stopService}
 *   left it stopped) and removes its temporary data directory, whatever of that the `beforeAll` got to start.
 * Hooks declared after the call run after it: a spec writes its sessions in its own `beforeAll`
 * (with its own timeout) through {@link AuditPageInUse.client}.
 */
export function useAuditPage(options: AuditPageOptions = {}): AuditPageInUse {
  let harness: ClientHarness | undefined;
  let running = false;
  let client: SessionServiceClient | undefined;
  let browser: Browser | undefined;
  let page: Page | undefined;
  const { apiKey, ...service } = options;
  const started = <T>(value: T | undefined, name: string): T => {
    if (value === undefined) throw new Error(`useAuditPage: no ${name} yet: it starts in beforeAll; use it inside a test or a later hook`);
    return value;
  };
  beforeAll(async () => {
    harness = await startListeningService(service);
    running = true;
    client = harness.client(apiKey);
    ({ browser, page } = await launchChromiumPage());
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    if (running) await harness?.stop();
    if (harness && !service.dataDir) fs.rmSync(harness.dataDir, { recursive: true, force: true });
  });
  return {
    get harness() {
      return started(harness, 'service');
    },
    get client() {
      return started(client, 'client');
    },
    get browser() {
      return started(browser, 'browser');
    },
    get page() {
      return started(page, 'page');
    },
    itInPage: itRerunOnRendererCrash(async () => {
      page = await replacePage(started(browser, 'browser'), page);
    }),
    stopService: async () => {
      await started(harness, 'service').stop();
      running = false;
    },
    replaceHarness: (next) => {
      harness = next;
      running = true;
    },
  };
}
