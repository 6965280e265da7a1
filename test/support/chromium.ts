/**
 * Debian's Chromium for the browser specs (`/usr/bin/chromium`, or `CHROMIUM_PATH`), driven by
 * playwright-core with the flags this machine needs (no sandbox as root, no background network:
 * the machine's closed network refuses it). A suite without Chromium skips with one line.
 */
import * as fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

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
