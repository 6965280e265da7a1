/**
 * Browser hardening of the audit page, Swagger UI and the API (pentest F1): every answer carries
 * a Content-Security-Policy forbidding framing, X-Frame-Options DENY, nosniff and Referrer-Policy
 * no-referrer. In Chromium: a page of another origin
 * framing /ui shows nothing of it, while /ui (key prompt, session list) and /docs (Swagger UI) work
 * under their policies without a single CSP violation.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { startListeningService, type ClientHarness } from '../support/client-harness';
import { describeWithChromium } from '../support/chromium';
import { useAuditPage } from '../support/audit-page';

const KEY = 'hardening-key-tenant-a';

/** The CSP violations `page` reports (console messages and securitypolicyviolation events). */
function collectCspViolations(page: Page): string[] {
  const seen: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) seen.push(message.text());
  });
  return seen;
}

describe('security headers', () => {
  let harness: ClientHarness;
  beforeAll(async () => {
    harness = await startListeningService({ env: { API_KEYS: `${KEY}:tenantA` } });
  }, 60_000);
  afterAll(() => harness?.stop());

  it.each(['/ui/', '/ui/app.js', '/docs', '/docs/openapi.json', '/v1/sessions', '/health', '/no-such-route'])(
    '%s forbids framing, sniffing and referrers',
    async (path) => {
      const res = await fetch(`${harness.baseUrl}${path}`, { headers: { authorization: `Bearer ${KEY}` } });
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-eval');
      expect(csp).not.toContain('upgrade-insecure-requests');
      expect(res.headers.get('strict-transport-security')).toBeNull();
    },
  );

  it('allows inline styles only on /docs (Swagger UI), never on /ui', async () => {
    const styleSrc = async (path: string): Promise<string | undefined> => {
      const csp = (await fetch(`${harness.baseUrl}${path}`)).headers.get('content-security-policy') ?? '';
      return csp
        .split(';')
        .map((directive) => directive.trim())
        .find((directive) => directive.startsWith('style-src '));
    };
    expect(await styleSrc('/ui/')).toBe("style-src 'self'");
    expect(await styleSrc('/docs')).toBe("style-src 'self' 'unsafe-inline'");
  });
});

describeWithChromium('the audit page and Swagger UI in a browser under their policies', () => {
  const ui = useAuditPage({ env: { API_KEYS: `${KEY}:tenantA` }, apiKey: KEY });
  const { itInPage } = ui;
  let evil: http.Server;
  let evilUrl: string;

  beforeAll(async () => {
    await ui.client.POST('/v1/sessions/{sessionId}/events', {
      params: { path: { sessionId: 'framed-session' } },
      body: { events: [{ type: 'user', text: 'hello' }] },
    });
    evil = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<html><body><h1>win a prize</h1><iframe id="f" src="${ui.harness.baseUrl}/ui/" width="1000" height="800"></iframe></body></html>`);
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    // Another origin: localhost instead of 127.0.0.1 and another port.
    evilUrl = `http://localhost:${(evil.address() as AddressInfo).port}/`;
  }, 120_000);
  afterAll(() => {
    evil?.closeAllConnections();
    evil?.close();
  });

  itInPage('a page of another origin framing /ui shows none of it (Chromium reports the refusal)', async () => {
    const violations = collectCspViolations(ui.page);
    await ui.page.goto(evilUrl);
    await ui.page.locator('h1').waitFor();
    const frame = await (await ui.page.locator('#f').elementHandle()).contentFrame();
    // The refused frame holds Chromium's error page: no key prompt, no audit page title.
    await ui.page.waitForTimeout(500);
    expect(await frame!.locator('#key-prompt, #main').count()).toBe(0);
    expect(await frame!.title()).not.toBe('Session audit');
    expect(violations.join('\n')).toMatch(/frame-ancestors/);
  });

  itInPage('/ui asks for the key and lists the sessions, with no CSP violation', async () => {
    const violations = collectCspViolations(ui.page);
    await ui.page.goto(`${ui.harness.baseUrl}/ui/`);
    await ui.page.locator('#key-prompt input[name=apiKey]').fill(KEY);
    await ui.page.locator('#key-prompt button[type=submit]').click();
    await ui.page.locator('#sessions tr[data-session="framed-session"]').waitFor();
    await ui.page.locator('#sessions tr[data-session="framed-session"]').click();
    await ui.page.locator('#timeline').waitFor();
    expect(violations).toEqual([]);
  });

  itInPage('/docs renders Swagger UI with its styles and no CSP violation', async () => {
    const violations = collectCspViolations(ui.page);
    await ui.page.goto(`${ui.harness.baseUrl}/docs`);
    await ui.page.locator('.swagger-ui .info .title').waitFor();
    await ui.page.locator('.opblock').first().waitFor();
    // The inline <style> applied: body margin 0.
    expect(await ui.page.evaluate('getComputedStyle(document.body).margin')).toBe('0px');
    expect(violations).toEqual([]);
  });
});
