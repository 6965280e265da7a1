/**
 * The audit page at `/ui` as a support engineer uses it (newcomer ncsupport's findings), in a real
 * browser against a real service (open mode): "what did the model see at revision N / at time T"
 * (the "Window at revision" panel, opened by "Go to revision" and "Go to time", as stored or as the
 * OpenAI messages the model receives, the timeline's "archived by" marks as of that revision).
 * Recall hits link to their timeline row and a summary to its compaction, their clock named.
 * Recall from the session list (every session of the tenant) and, on a session page, saying
 * when it searched that session only; its kind and archived filters.
 * The header names the key in use by its last 4 characters, and a session another tenant's key
 * cannot see says it does not exist "with the key in use"; a compaction re-based onto appends made
 * while its summarizer ran explains its "based on revision" beside the diff's later Before.
 * A customer's session: a system prompt, a fact said once with a client time two hours before,
 * a tool call and its result, a compaction that summarizes the fact away, then more turns.
 * Runs in a few seconds.
 */
import type { Schemas } from '@lib/client';
import { DEFAULT_SHADOW_PROMPT, EXTRACTIVE_SUMMARIZER_MODEL } from '@lib/compaction';
import { startListeningService } from '../support/client-harness';
import { describeWithChromium, waitInPage } from '../support/chromium';
import { useAuditPage } from '../support/audit-page';
import { ControlledSummarizer } from '../support/service-harness';

const SESSION = 'sup-customer';
const USER = 'mia_li_3668';
/** Another session of the tenant (the customer's phrase is not in it). */
const OTHER = 'sup-other';

describeWithChromium('audit page for a support engineer', () => {
  const ui = useAuditPage();
  const { itInPage } = ui;
  let compaction: Schemas['CompactionHistoryItem'];
  let log: Schemas['LogPage'];

  beforeAll(async () => {
    const path = { sessionId: SESSION };
    const first = [
      { id: 's0', type: 'system', text: 'You are an airline agent.' },
      { id: 'c0-5', type: 'user', text: 'No, I do not want travel insurance.', createdAt: '2026-01-01T09:00:00Z' },
      { id: 'a1', type: 'assistant', text: null, toolCalls: [{ id: 'call_1', name: 'get_reservation', arguments: '{"id":"R1"}' }] },
      { id: 't1', type: 'tool', responses: [{ toolCallId: 'call_1', name: 'get_reservation', data: '{"flight":"HAT001"}' }] },
      { id: 'a2', type: 'assistant', text: 'Your reservation R1 is on flight HAT001.' },
      { id: 'u2', type: 'user', text: 'Please change it to a later flight.' },
      { id: 'a3', type: 'assistant', text: 'Which day would you like?' },
      { id: 'u3', type: 'user', text: 'Friday, please.' },
    ];
    const appended = await ui.client.POST('/v1/sessions/{sessionId}/events', { params: { path }, body: { userId: USER, events: first } as never });
    expect(appended.response.status).toBe(201);
    const { data } = await ui.client.POST('/v1/sessions/{sessionId}/compactions', {
      params: { path },
      body: { strategy: { type: 'rolling-summary', keepTurns: 1, summarizeAtTokens: 10 } },
    });
    expect(data!.outcome).toBe('compacted');
    await ui.client.POST('/v1/sessions/{sessionId}/events', {
      params: { path },
      body: {
        events: [
          { id: 'late-1', type: 'user', text: 'Remember: no insurance!' },
          { id: 'late-6', type: 'assistant', text: 'Booked, with travel insurance.' },
        ],
      },
    });
    compaction = (
      await ui.client.GET('/v1/sessions/{sessionId}/compactions/{compactionId}', { params: { path: { ...path, compactionId: data!.compactionId! } } })
    ).data!;
    expect(compaction.archivedIds).toContain('c0-5');
    log = (await ui.client.GET('/v1/sessions/{sessionId}/events', { params: { path, query: { limit: 1000 } } })).data!;
    await ui.client.POST('/v1/sessions/{sessionId}/events', {
      params: { path: { sessionId: OTHER } },
      body: { events: [{ id: 'o1', type: 'user', text: 'Where is my baggage?' }] },
    });
    // Recall reads a projection: wait until it has the last event.
    for (let tries = 0; ; tries++) {
      const { data: found } = await ui.client.GET('/v1/recall', { params: { query: { q: 'baggage' } } });
      if (found!.items.length === 1) break;
      if (tries > 100) throw new Error('recall did not catch up');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }, 120_000);

  const revisionOf = (eventId: string) => log.events.find((e) => e.eventId === eventId)!.revision;
  /** The API's window at `revision` in `format` (the page's estimator: the compaction's, as no policy is set). */
  const windowAt = async (revision: string, format: 'events' | 'openai') =>
    (
      await ui.client.GET('/v1/sessions/{sessionId}/window', {
        params: { path: { sessionId: SESSION }, query: { atRevision: revision, format, estimator: compaction.estimator } },
      })
    ).data! as Schemas['Window'] & { events?: Array<{ id: string }>; messages?: Array<{ role: string }> };
  const openSession = async () => {
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${SESSION}`);
    await ui.page.locator('#timeline li').first().waitFor();
  };
  const goToRevision = async (revision: string) => {
    await ui.page.locator('#timeline-goto input[name=revision]').fill(revision);
    await ui.page.locator('#timeline-goto button[type=submit]').click();
    await ui.page.locator('#window-at-heading', { hasText: `Window at revision ${revision}` }).waitFor();
    await waitInPage(ui.page, "document.querySelector('#window-at-status')?.textContent.startsWith('Right after')");
  };

  // ncsupport F2: recall was only on a session page, "this session only" ticked and not said.
  itInPage(
    'searches every session from the session list, with the kind and archived filters; a session page says when it searched that session only',
    async () => {
      await ui.page.goto(`${ui.harness.baseUrl}/ui#/`);
      await ui.page.locator('#sessions').waitFor();
      expect(await ui.page.locator('#recall-scope').innerText()).toBe('Searches every session of the tenant.');
      await ui.page.locator('#recall input[name=recall]').fill('travel insurance');
      await ui.page.locator('#recall button[type=submit]').click();
      await ui.page.locator('#recall-status', { hasText: 'searched in every session' }).waitFor();
      const hits = () => ui.page.locator('#recall-results li[data-event]').evaluateAll((els) => els.map((e) => e.getAttribute('data-event')));
      // The customer's session (its summary kept the fact too), not the other one.
      expect(new Set(await hits())).toEqual(new Set(['c0-5', 'late-6', compaction.summary!.id]));
      // Archived only: the fact the compaction archived.
      await ui.page.locator('#recall-archived').selectOption('true');
      await ui.page.locator('#recall button[type=submit]').click();
      await ui.page.locator('#recall-status', { hasText: 'archived only' }).waitFor();
      expect(await hits()).toEqual(['c0-5']);
      expect(await ui.page.locator('#recall-status').innerText()).toBe('1 hit, all shown (searched in every session, archived only)');
      // Summaries only: is the fact in a summary?
      await ui.page.locator('#recall-archived').selectOption('');
      await ui.page.locator('#recall-type').selectOption('summary');
      await ui.page.locator('#recall button[type=submit]').click();
      await ui.page.locator('#recall-status', { hasText: 'summaries only' }).waitFor();
      expect(await hits()).toEqual([compaction.summary!.id]);
      await ui.page.locator('#recall-type').selectOption('');
      // On another session's page, "this session only" is ticked: said before and after the search.
      await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${OTHER}`);
      await ui.page.locator('#timeline li').first().waitFor();
      expect(await ui.page.locator('#recall-scope').innerText()).toContain('Searches this session only');
      await ui.page.locator('#recall input[name=recall]').fill('travel insurance');
      await ui.page.locator('#recall button[type=submit]').click();
      await ui.page.locator('#recall-status', { hasText: 'no hit' }).waitFor();
      expect(await ui.page.locator('#recall-status').innerText()).toBe(
        'no hit (searched in this session only): untick "this session only" to search every session',
      );
      await ui.page.locator('#recall input[name=thisSession]').uncheck();
      expect(await ui.page.locator('#recall-scope').innerText()).toBe('Searches every session of the tenant.');
    },
  );

  // ncsupport F8: after Forget or a refused key the title and the announcer still named the session; the refused key stayed.
  itInPage('"Forget API key" and a refused key leave no session id in the title or the announcer, and no refused key in storage', async () => {
    const keyed = await startListeningService({ env: { API_KEYS: 'sup-key-1a2b3c4d:tenantA' } });
    const tab = await ui.browser.newPage();
    try {
      await keyed
        .client('sup-key-1a2b3c4d')
        .POST('/v1/sessions/{sessionId}/events', { params: { path: { sessionId: 'sup-keyed' } }, body: { events: [{ type: 'user', text: 'hi' }] } });
      await tab.goto(`${keyed.baseUrl}/ui#/`);
      await tab.evaluate("sessionStorage.setItem('session-audit.apiKey', 'sup-key-1a2b3c4d')");
      await tab.goto(`${keyed.baseUrl}/ui#/s/sup-keyed`);
      await tab.locator('#timeline').waitFor();
      await waitInPage(tab, "document.querySelector('#announce').textContent.includes('sup-keyed')");
      await tab.locator('#forget-key').click();
      await tab.locator('#key-prompt').waitFor();
      expect(await tab.title()).not.toContain('sup-keyed');
      expect(await tab.locator('#announce').textContent()).not.toContain('sup-keyed');
      // A refused key while browsing: the prompt, nothing of the session, and the key gone from storage.
      await tab.locator('#key-prompt input[name=apiKey]').fill('sup-key-1a2b3c4d');
      await tab.locator('#key-prompt button[type=submit]').click();
      await tab.locator('#timeline').waitFor();
      await waitInPage(tab, "document.querySelector('#announce').textContent.includes('sup-keyed')");
      await tab.evaluate("sessionStorage.setItem('session-audit.apiKey', 'not-a-real-key-000')");
      await tab.locator('#as-of a').click();
      await tab.locator('#key-prompt').waitFor();
      expect(await tab.locator('#key-prompt').innerText()).toContain('The service refused this API key. Enter one of');
      expect(await tab.title()).not.toContain('sup-keyed');
      expect(await tab.locator('#announce').textContent()).not.toContain('sup-keyed');
      expect(await tab.evaluate("sessionStorage.getItem('session-audit.apiKey')")).toBeNull();
    } finally {
      await tab.close();
      await keyed.stop();
    }
  });

  // ncsupport F6: the details said "trigger after: met" for triggerStillFires false.
  itInPage('says "no longer fires" in a compaction\'s details when the API says its trigger no longer fires, with a tooltip that fits', async () => {
    const path = { sessionId: 'sup-trigger' };
    const events = Array.from({ length: 12 }, (_, i) => ({ type: i % 2 ? ('assistant' as const) : ('user' as const), text: `turn ${i} of a talk` }));
    await ui.client.POST('/v1/sessions/{sessionId}/events', { params: { path }, body: { events } });
    const { data } = await ui.client.POST('/v1/sessions/{sessionId}/compactions', {
      params: { path },
      body: { strategy: { type: 'sliding-window', maxEvents: 4 }, trigger: { type: 'turn-count', maxTurns: 3 } },
    });
    expect(data!.outcome).toBe('compacted');
    const { data: item } = await ui.client.GET('/v1/sessions/{sessionId}/compactions/{compactionId}', {
      params: { path: { ...path, compactionId: data!.compactionId! } },
    });
    expect(item!.triggerStillFires).toBe(false);
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/sup-trigger/c/${data!.compactionId}`);
    await ui.page.locator('#trigger-after').waitFor();
    expect(await ui.page.locator('#trigger-after').innerText()).toBe('no longer fires');
    expect(await ui.page.locator('#trigger-after').getAttribute('title')).toContain('no longer fires (triggerStillFires: false)');
  });

  // ncverify52 1: the details did not say which version of the stored policy a pass applied (the API's
  // from and policyRevision); 4: an extractive pass read "1 call, 0 prompt + 0 completion tokens reported".
  itInPage("names the policy revision a pass applied, linked to the policy event's row; an extractive summarizer's pass spent no tokens", async () => {
    const sessionId = 'sup-policy';
    const path = { sessionId };
    const turns = (round: number) =>
      Array.from({ length: 8 }, (_, i) => ({ type: i % 2 ? ('assistant' as const) : ('user' as const), text: `turn ${i} of round ${round}` }));
    const policy = {
      strategy: { type: 'rolling-summary' as const, keepTurns: 1, summarizeAtTokens: 10, systemPrompt: 'Keep <b>every</b> id.' },
      trigger: { type: 'turn-count' as const, maxTurns: 2 },
    };
    // appended before the policy (4 turns, over its trigger): no automatic pass, they follow appends
    await ui.client.POST('/v1/sessions/{sessionId}/events', { params: { path }, body: { events: turns(1) } });
    const first = (await ui.client.PUT('/v1/sessions/{sessionId}/policy', { params: { path }, body: policy })).data!;
    const { data: commanded } = await ui.client.POST('/v1/sessions/{sessionId}/compactions', { params: { path }, body: {} });
    expect(commanded).toMatchObject({ outcome: 'compacted', from: 'policy', policyRevision: first.revision });
    // the policy changed: the next append's automatic pass applies its new revision
    const second = (
      await ui.client.PUT('/v1/sessions/{sessionId}/policy', { params: { path }, body: { ...policy, trigger: { type: 'turn-count', maxTurns: 3 } } })
    ).data!;
    await ui.client.POST('/v1/sessions/{sessionId}/events', { params: { path }, body: { events: turns(2) } });
    let auto: Schemas['CompactionHistoryItem'] | undefined;
    for (let tries = 0; !auto; tries++) {
      if (tries > 200) throw new Error('no automatic pass recorded');
      await new Promise((resolve) => setTimeout(resolve, 50));
      auto = (await ui.client.GET('/v1/sessions/{sessionId}/compactions', { params: { path } })).data!.compactions.find((c) => c.origin === 'auto');
    }
    expect(auto).toMatchObject({ outcome: 'compacted', from: 'policy', policyRevision: second.revision });
    expect(second.revision).not.toBe(first.revision);

    const policyApplied = ui.page.locator('#policy-applied');
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${sessionId}/c/${commanded!.compactionId}`);
    await policyApplied.waitFor();
    expect(await policyApplied.innerText()).toBe(
      `revision ${first.revision} of the stored policy (commanded without a strategy: its strategy, trigger and estimator applied)`,
    );
    expect(await ui.page.locator('#summarizer-figures').innerText()).toBe(`extractive (no model, ${EXTRACTIVE_SUMMARIZER_MODEL}): no tokens spent`);
    expect(await ui.page.locator('#answered-models').count()).toBe(0);
    // the strategy's summarizer prompt and shadow prompt (the default, as stored), whole and as text (newcomer ncaudit64 F5: only the API had them)
    expect(await ui.page.locator('#diff dd.prompt').allInnerTexts()).toEqual(['Keep <b>every</b> id.', DEFAULT_SHADOW_PROMPT]);
    // the extractive summarizer sends no prompt: its pass says the summarizer prompt went unused (newcomer ncui69 F5)
    expect(await ui.page.locator('#diff dl.facts div:has(> dd.prompt) > dt').allInnerTexts()).toEqual([
      'summarizer prompt (not used by the extractive summarizer: it sends no prompt)',
      'shadow prompt',
    ]);
    // the session's spend on the extractive summarizer: nothing, no call (it calls no endpoint; newcomer ncui69 F4: "2 calls"
    // beside 1 request to the endpoint), not "0 prompt + 0 completion tokens reported" (newcomer ncrecheck64 F5)
    expect(await ui.page.locator('#summarizer-spend dd').innerText()).toBe('no calls');
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${sessionId}/c/${auto.compactionId}`);
    await ui.page.locator(`#diff[data-compaction="${auto.compactionId}"]`).waitFor();
    expect(await policyApplied.innerText()).toBe(`revision ${second.revision} of the stored policy (automatic pass)`);
    // The revision links to the policy event's row, as "Go to revision" goes there.
    const link = policyApplied.locator('a');
    expect(await link.getAttribute('href')).toBe(`#/s/${sessionId}/r/${second.revision}`);
    await link.click();
    const target = ui.page.locator('#timeline li.target');
    await target.waitFor();
    // the policy whole, so two versions of one strategy type read apart (newcomer ncaudit64 F3)
    expect(await target.innerText()).toMatch(
      new RegExp(
        `^#${second.revision} .*policy set: rolling-summary \\(keepTurns 1, summarizeAtTokens 10.*\\) when turn-count \\(maxTurns 3\\), counted in cl100k_base`,
        's',
      ),
    );
    // who set it: an automatic pass's "who asked" ends at a named policy row (newcomer ncui74 F1)
    expect(await target.locator('.policy-set-by').innerText()).toMatch(
      /^, set by over HTTP, no API key \(open mode\), request id \S+ \((made by the service|the client's X-Request-Id)\)$/,
    );
    // its prompts too, so versions differing only in them read apart (newcomer ncrecheck64 F2)
    expect(await target.innerText()).toContain(`; systemPrompt "Keep <b>every</b> id."; shadowPrompt "${DEFAULT_SHADOW_PROMPT.slice(0, 40)}…"`);
    // the whole policy in its tooltip (newcomer ncrecheck64b N2: prompts differing past their first 40 characters read alike)
    expect(JSON.parse((await target.locator('span.policy').getAttribute('title'))!)).toMatchObject({
      strategy: { systemPrompt: 'Keep <b>every</b> id.', shadowPrompt: DEFAULT_SHADOW_PROMPT },
      trigger: { type: 'turn-count', maxTurns: 3 },
    });
    expect(await ui.page.locator('#timeline-goto-status').innerText()).toMatch(new RegExp(`^went to revision ${second.revision} \\(row `));
    expect(await ui.page.evaluate('document.activeElement?.classList.contains("target")')).toBe(true);
    // The link opened anew (not from the page on screen) goes there too.
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${sessionId}/r/${first.revision}`);
    await ui.page.locator('#timeline li.target').waitFor();
    expect(await ui.page.locator('#timeline li.target').innerText()).toMatch(
      new RegExp(
        `^#${first.revision} .*policy set: rolling-summary \\(keepTurns 1, summarizeAtTokens 10.*\\) when turn-count \\(maxTurns 2\\), counted in cl100k_base`,
        's',
      ),
    );
    // A pass that named its strategy applied no stored policy: no such line.
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${SESSION}/c/${compaction.compactionId}`);
    await ui.page.locator('#summarizer-figures').waitFor();
    expect(compaction).toMatchObject({ from: 'request', policyRevision: null });
    expect(await policyApplied.count()).toBe(0);
  });

  // ncsupport F3: a hit had no link to its row, a summary none to its compaction, and its time no clock named.
  itInPage(
    'links each recall hit to its timeline row (its revision named), a summary to the compaction that wrote it, and names the clock of its time',
    async () => {
      await openSession();
      await ui.page.locator('#recall input[name=recall]').fill('travel insurance');
      await ui.page.locator('#recall button[type=submit]').click();
      await ui.page.locator('#recall-status', { hasText: 'all shown' }).waitFor();
      const hit = (id: string) => ui.page.locator(`#recall-results li[data-event="${id}"]`);
      const fact = revisionOf('c0-5');
      expect(await hit('c0-5').locator('a.row-link').innerText()).toBe(`revision ${fact}`);
      expect(await hit('c0-5').locator('a.row-link').getAttribute('href')).toBe(`#/s/${SESSION}/e/c0-5`);
      expect(await hit('c0-5').innerText()).toContain('client time 2026-01-01 09:00:00.000 UTC');
      const booked = log.events.find((e) => e.eventId === 'late-6')!;
      expect(await hit('late-6').innerText()).toContain(`recorded ${booked.recordedAt.replace('T', ' ').replace('Z', ' UTC')}`);
      // a summary's time is its compaction's, named so (newcomer ncaudit64 F2: it read "recorded", the store's time, which it is not)
      expect(await hit(compaction.summary!.id).innerText()).toContain(`summarized ${compaction.at.replace('T', ' ').replace('Z', ' UTC')}`);
      const writer = hit(compaction.summary!.id).locator('a.written-by');
      expect(await writer.getAttribute('href')).toBe(`#/s/${SESSION}/c/${compaction.compactionId}`);
      // The row link goes to the row on this page, and opens the window at its revision.
      await hit('c0-5').locator('a.row-link').click();
      await ui.page.locator('#timeline li.target[data-event="c0-5"]').waitFor();
      await ui.page.locator('#window-at-heading', { hasText: `Window at revision ${fact}` }).waitFor();
      expect(await ui.page.locator('#timeline-goto-status').innerText()).toContain(`went to event c0-5, revision ${fact}`);
      // From the session list (every session): the row link opens the session on that row; the time says its clock may be either.
      await ui.page.goto(`${ui.harness.baseUrl}/ui#/`);
      await ui.page.locator('#sessions').waitFor();
      await ui.page.locator('#recall input[name=recall]').fill('travel insurance');
      await ui.page.locator('#recall button[type=submit]').click();
      await ui.page.locator('#recall-status', { hasText: 'all shown' }).waitFor();
      expect(await hit('c0-5').innerText()).toContain("created (client's time, else recorded) 2026-01-01 09:00:00.000 UTC");
      expect(await hit('c0-5').locator('a.row-link').innerText()).toBe('its row');
      await hit('c0-5').locator('a.row-link').click();
      await ui.page.locator('#timeline li.target[data-event="c0-5"]').waitFor();
      expect(await ui.page.locator('#session-title').innerText()).toBe(SESSION);
    },
  );

  // ncsupport F1: "Go to revision" only outlined a row; the window at that revision was shown nowhere.
  itInPage(
    'shows the window at the revision gone to: its events, the summary in its place, its tokens; and as the OpenAI messages the model receives',
    async () => {
      await openSession();
      const at = revisionOf('late-6');
      await goToRevision(at);
      const events = await windowAt(at, 'events');
      expect(await ui.page.locator('#window-at-list li').evaluateAll((els) => els.map((e) => e.getAttribute('data-event')))).toEqual(
        events.events!.map((e) => e.id),
      );
      const summaryRow = ui.page.locator(`#window-at-list li.summary[data-event="${compaction.summary!.id}"]`);
      expect(await summaryRow.innerText()).toContain(compaction.summary!.text.slice(0, 40));
      expect(await summaryRow.locator('a').getAttribute('href')).toBe(`#/s/${SESSION}/c/${compaction.compactionId}`);
      expect(await ui.page.locator('#window-at-status').innerText()).toContain(`${events.tokens.toLocaleString('en-US')} ${compaction.estimator}`);
      // What the model receives: the system message first, the summary as a user + assistant pair, the tool call and its result.
      await ui.page.locator('#window-at-format input[value=openai]').check();
      await ui.page.locator('#window-at-list li[data-role]').first().waitFor();
      const openai = await windowAt(at, 'openai');
      const roles = await ui.page.locator('#window-at-list li').evaluateAll((els) => els.map((e) => e.getAttribute('data-role')));
      expect(roles).toEqual(openai.messages!.map((m) => m.role));
      expect(roles[0]).toBe('system');
      expect(roles.slice(1, 3)).toEqual(['user', 'assistant']);
      expect(await ui.page.locator('#window-at-list li').nth(2).innerText()).toContain(compaction.summary!.text.slice(0, 40));
      expect(await ui.page.locator('#window-at-status').innerText()).toContain(`${openai.tokens.toLocaleString('en-US')} ${compaction.estimator}`);
      // Named for screen readers: a region with its heading, the list a named scroll box.
      expect(await ui.page.locator('#window-at-list').getAttribute('aria-label')).toBe(`Window at revision ${at}: the OpenAI messages`);
      expect(await ui.page.locator('#window-at').getAttribute('aria-labelledby')).toBe('window-at-heading');
    },
  );

  // ncaudit64 F6: "covers 20 events" beside 21 archived, nothing saying which one was not summarized, nor why.
  itInPage('names the events a summarizing pass archived without summarizing them: the system message a newer one replaced', async () => {
    const sessionId = 'sup-superseded';
    const path = { sessionId };
    const turns = Array.from({ length: 8 }, (_, i) => ({ id: `t${i}`, type: i % 2 ? ('assistant' as const) : ('user' as const), text: `turn ${i}` }));
    await ui.client.POST('/v1/sessions/{sessionId}/events', {
      params: { path },
      body: { events: [{ id: 'sys-old', type: 'system', text: 'Be brief.' }, ...turns, { id: 'sys-new', type: 'system', text: 'Be thorough.' }] },
    });
    const { data } = await ui.client.POST('/v1/sessions/{sessionId}/compactions', {
      params: { path },
      body: { strategy: { type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 0 } },
    });
    const item = (
      await ui.client.GET('/v1/sessions/{sessionId}/compactions/{compactionId}', { params: { path: { ...path, compactionId: data!.compactionId! } } })
    ).data!;
    expect(item.archivedIds).toContain('sys-old');
    expect(item.summary!.coveredIds).not.toContain('sys-old');
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${sessionId}/c/${item.compactionId}`);
    await ui.page.locator('#summary-text').waitFor();
    expect(await ui.page.locator('#not-summarized').innerText()).toBe('also archived, not summarized (a system message a newer one replaced): sys-old');
  });

  // newcomer ncui69 F8: a hit of the session on screen written after the page was read read as another session's, and its link led nowhere.
  itInPage('labels a hit of the session on screen written after the page was read so, and reads the page again to go to it', async () => {
    const sessionId = 'sup-late';
    const path = { sessionId };
    const append = (id: string, text: string) =>
      ui.client.POST('/v1/sessions/{sessionId}/events', { params: { path }, body: { events: [{ id, type: 'user', text }] } });
    /** Waits until recall finds `count` hits of the word in the session. */
    const indexed = async (count: number) => {
      for (let tries = 0; ; tries++) {
        const { data: found } = await ui.client.GET('/v1/recall', { params: { query: { q: 'zebraword', sessionId } } });
        if (found!.items.length === count) return;
        if (tries > 100) throw new Error('recall did not catch up');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    await append('l0', 'an early question');
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${sessionId}`);
    await ui.page.locator('#timeline li[data-event="l0"]').waitFor();
    await append('l1', 'zebraword appeared late');
    await indexed(1);
    // A link to it (the recall hit's) on the page read before: the status says so and reads again from there.
    await ui.page.evaluate(`location.hash = ${JSON.stringify(`#/s/${sessionId}/e/l1`)}`);
    await ui.page.locator('#timeline-event-reread').click({ timeout: 5_000 });
    await ui.page.locator('#timeline li.target[data-event="l1"]').waitFor();
    expect(await ui.page.locator('#timeline-goto-status').innerText()).toMatch(/^went to event l1, revision 1 /);
    // The recall hit itself, on a page read before it was written: named so, its link reading the page again.
    await append('l2', 'zebraword again');
    await indexed(2);
    await ui.page.locator('#recall input[name=recall]').fill('zebraword');
    await ui.page.locator('#recall button[type=submit]').click();
    const late = ui.page.locator('#recall-results li[data-event="l2"] a.row-link');
    await late.waitFor();
    expect(await late.innerText()).toBe('written after the page was read: read again and go to it');
    expect(await ui.page.locator('#recall-results li[data-event="l1"] a.row-link').innerText()).toBe('revision 1');
    await late.click();
    await ui.page.locator('#timeline li.target[data-event="l2"]').waitFor();
    expect(await ui.page.evaluate('location.hash')).toBe(`#/s/${sessionId}/e/l2`);
    expect(await ui.page.locator('#as-of').innerText()).toContain('As of revision 2,');

    // An event the session does not hold (erased, or another session's): once the page was read again for it, it says
    // so, without offering to read again (newcomer ncrecheck69 N5: the offer came back after each read); so does a fresh load.
    const gone = `is not on this timeline, read just now (as of revision 2): it was erased, or is not this session's`;
    await ui.page.evaluate(`location.hash = ${JSON.stringify(`#/s/${sessionId}/e/erased-one`)}`);
    await ui.page.locator('#timeline-event-reread').click({ timeout: 5_000 });
    await waitInPage(ui.page, `document.querySelector('#timeline-goto-status')?.textContent.includes('read just now')`);
    expect(await ui.page.locator('#timeline-goto-status').innerText()).toBe(`event erased-one ${gone}`);
    expect(await ui.page.locator('#timeline-event-reread').count()).toBe(0);
    await ui.page.goto('about:blank');
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${sessionId}/e/erased-one`);
    await waitInPage(ui.page, `document.querySelector('#timeline-goto-status')?.textContent.includes('read just now')`);
    expect(await ui.page.locator('#timeline-event-reread').count()).toBe(0);
  });

  // ncaudit64 F4: a long text was cut at 600 UTF-16 units in the panel meant to show what the model was sent, with no way to see the rest.
  itInPage('shows a long text of the window whole on request, as stored and as the OpenAI messages', async () => {
    const sessionId = 'sup-long-text';
    const long = `${'word '.repeat(400)}the end <b>of it</b>`;
    await ui.client.POST('/v1/sessions/{sessionId}/events', {
      params: { path: { sessionId } },
      body: { events: [{ id: 'long-1', type: 'user', text: long }] },
    });
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${sessionId}`);
    await ui.page.locator('#timeline li').first().waitFor();
    await ui.page.locator('#timeline-goto input[name=revision]').fill('0');
    await ui.page.locator('#timeline-goto button[type=submit]').click();
    for (const format of ['events', 'openai']) {
      await ui.page.locator(`#window-at-format input[value=${format}]`).check();
      const show = ui.page.locator('#window-at-list button.show-all');
      await show.waitFor();
      expect(await show.innerText()).toBe(`show all ${long.length.toLocaleString('en-US')} characters`);
      expect(await ui.page.locator('#window-at-list').innerText()).not.toContain('the end');
      await show.click();
      // the whole text, as text, where the excerpt was, focused
      expect(await ui.page.locator('#window-at-list').innerText()).toContain('the end <b>of it</b>');
      expect(await ui.page.evaluate('document.activeElement?.textContent?.length')).toBe(long.length);
      expect(await show.count()).toBe(0);
    }
  });

  itInPage('marks the timeline as of the revision gone to: an event still in the window then is not marked archived', async () => {
    await openSession();
    const row = ui.page.locator('#timeline li[data-event="c0-5"]');
    expect(await row.getAttribute('class')).toContain('archived');
    expect(await ui.page.locator('#timeline-marks').innerText()).toContain(`as of revision ${log.revision}, the page's revision`);
    const before = revisionOf('u3');
    await ui.page.locator('#window-at-format input[value=events]').check();
    await goToRevision(before);
    // The fact was in the window at that revision.
    expect(await ui.page.locator('#window-at-list li[data-event="c0-5"]').count()).toBe(1);
    expect(await row.getAttribute('class')).not.toContain('archived');
    expect(await row.locator('.archived-by').isHidden()).toBe(true);
    expect(await row.innerText()).toContain('archived later, at revision');
    expect(await ui.page.locator('#timeline-marks').innerText()).toContain(`as of revision ${before}`);
    expect(await ui.page.locator('#timeline li[data-event="late-1"]').getAttribute('class')).toContain('after-view');
    // Closing the window puts the marks back as of the page's revision.
    await ui.page.locator('#window-at-close').click();
    expect(await row.getAttribute('class')).toContain('archived');
    expect(await row.locator('.archived-by').isVisible()).toBe(true);
  });

  itInPage('"Go to time" shows the window right after the event the time resolved to, naming its store time', async () => {
    await openSession();
    const last = log.events.find((e) => e.eventId === 'late-6')!;
    await ui.page.locator('#timeline-goto-time input[name=time]').fill(last.recordedAt);
    await ui.page.locator('#timeline-goto-time button[type=submit]').click();
    await ui.page.locator('#window-at-heading', { hasText: `Window at revision ${last.revision}` }).waitFor();
    const status = await ui.page.locator('#window-at-status').innerText();
    expect(status).toContain(`recorded (store time) ${last.recordedAt.replace('T', ' ').replace('Z', ' UTC')}`);
    expect(await ui.page.locator('#window-at-list li[data-event="late-6"]').count()).toBe(1);
  });

  // ncsupport F7: the header named the mode only; with tenant B's key a tenant A session said "does not exist", no key named.
  itInPage('names the key in use in the header by its last 4 characters (never the whole key), and adds it to a "does not exist" answer', async () => {
    const [keyA, keyB] = ['sup-key-1a2b3c4d', 'sup-key-9z8y7x6w'];
    const keyed = await startListeningService({ env: { API_KEYS: `${keyA}:tenantA,${keyB}:tenantB` } });
    const tab = await ui.browser.newPage();
    try {
      await keyed
        .client(keyA)
        .POST('/v1/sessions/{sessionId}/events', { params: { path: { sessionId: 'sup-tenant-a' } }, body: { events: [{ type: 'user', text: 'hi' }] } });
      await tab.goto(`${keyed.baseUrl}/ui#/`);
      await tab.evaluate(`sessionStorage.setItem('session-audit.apiKey', '${keyA}')`);
      await tab.goto(`${keyed.baseUrl}/ui#/s/sup-tenant-a`);
      await tab.locator('#timeline').waitFor();
      await tab.locator('#mode', { hasText: 'api-keys' }).waitFor();
      expect(await tab.locator('#key-in-use').innerText()).toBe('key in use: …3c4d');
      // Tenant B's key on tenant A's session (a first load: the error in place of the page), then from the list (a banner).
      await tab.evaluate(`sessionStorage.setItem('session-audit.apiKey', '${keyB}')`);
      await tab.reload();
      await tab.locator('#page-error').waitFor();
      expect(await tab.locator('#key-in-use').innerText()).toBe('key in use: …7x6w');
      expect(await tab.locator('#page-error').innerText()).toContain(
        'session "sup-tenant-a" does not exist with the key in use (…7x6w: a session of another tenant is answered so too; with several keys, try another one): no event was appended to it',
      );
      await tab.evaluate("location.hash = '#/'");
      await tab.locator('#sessions').waitFor();
      await tab.evaluate("location.hash = '#/s/sup-tenant-a'");
      await tab.locator('#banner:not([hidden])').waitFor();
      expect(await tab.locator('#banner').innerText()).toContain('does not exist with the key in use (…7x6w');
      const shown = await tab.evaluate<string>('document.body.innerText');
      expect(shown).not.toContain(keyB);
      expect(shown).not.toContain(keyA);
      await tab.locator('#forget-key').click();
      await tab.locator('#key-prompt').waitFor();
      expect(await tab.locator('#key-in-use').isHidden()).toBe(true);
    } finally {
      await tab.close();
      await keyed.stop();
    }
    // Open mode: no key, no note.
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/sup-none`);
    await ui.page.locator('#page-error').waitFor();
    expect(await ui.page.locator('#key-in-use').isHidden()).toBe(true);
    expect(await ui.page.locator('#page-error').innerText()).not.toContain('with the key in use');
  });

  // The full run's /ui tests timed out on a race: a key stored while /health answered slowly was removed by the prompt.
  itInPage('uses a key stored while /health is still answering and keeps it: the first read does not prompt over it', async () => {
    const key = 'sup-key-5e6f7a8b';
    const keyed = await startListeningService({ env: { API_KEYS: `${key}:tenantA` } });
    const tab = await ui.browser.newPage();
    try {
      const path = { sessionId: 'sup-slow-health' };
      await keyed.client(key).POST('/v1/sessions/{sessionId}/events', { params: { path }, body: { events: [{ type: 'user', text: 'hi' }] } });
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      await tab.route('**/health', async (route) => {
        await held;
        await route.continue();
      });
      await tab.goto(`${keyed.baseUrl}/ui#/`);
      await tab.evaluate(`sessionStorage.setItem('session-audit.apiKey', '${key}')`);
      release();
      await tab.locator('#mode', { hasText: 'api-keys' }).waitFor({ timeout: 10_000 });
      await tab.locator('#sessions tr[data-session="sup-slow-health"]').waitFor({ timeout: 10_000 });
      expect(await tab.locator('#key-prompt').count()).toBe(0);
      expect(await tab.evaluate("sessionStorage.getItem('session-audit.apiKey')")).toBe(key);
      expect(await tab.locator('#key-in-use').innerText()).toBe('key in use: …7a8b');
      await tab.goto(`${keyed.baseUrl}/ui#/s/sup-slow-health`);
      await tab.locator('#timeline').waitFor({ timeout: 10_000 });
    } finally {
      await tab.close();
      await keyed.stop();
    }
  });

  // ncsupport F10: "based on revision 18" beside "Before: … (revision 22)" was not explained.
  itInPage('explains "based on revision" of a pass re-based onto appends made while its summarizer ran, and marks them in Before', async () => {
    const summarizer = new ControlledSummarizer();
    const held = await startListeningService({ summarizer });
    try {
      const heldClient = held.client();
      const path = { sessionId: 'sup-rebased' };
      const turns = Array.from({ length: 10 }, (_, i) => ({ id: `r${i}`, type: i % 2 ? ('assistant' as const) : ('user' as const), text: `turn ${i}` }));
      await heldClient.POST('/v1/sessions/{sessionId}/events', { params: { path }, body: { events: turns } });
      const waiting = summarizer.hold();
      const compacting = heldClient.POST('/v1/sessions/{sessionId}/compactions', {
        params: { path },
        body: { strategy: { type: 'recursive-summarization', maxEventsToKeep: 4 } },
      });
      await waiting;
      for (const id of ['m1', 'm2'])
        await heldClient.POST('/v1/sessions/{sessionId}/events', { params: { path }, body: { events: [{ id, type: 'user', text: `meanwhile ${id}` }] } });
      summarizer.release();
      const { data } = await compacting;
      expect(data!.outcome).toBe('compacted');
      const { data: diff } = await heldClient.GET('/v1/sessions/{sessionId}/compactions/{compactionId}/diff', {
        params: { path: { ...path, compactionId: data!.compactionId! } },
      });
      const { data: item } = await heldClient.GET('/v1/sessions/{sessionId}/compactions/{compactionId}', {
        params: { path: { ...path, compactionId: data!.compactionId! } },
      });
      const [based, before] = [Number(item!.basedOnRevision), Number(diff!.before.revision)];
      expect(before - based).toBe(2);
      await ui.page.goto(`${held.baseUrl}/ui#/s/sup-rebased/c/${data!.compactionId}`);
      await ui.page.locator('#based-on').waitFor();
      expect(await ui.page.locator('#based-on').innerText()).toBe(
        `${based}: the pass planned on the window at revision ${based} (what its strategy and summarizer were given); revisions ${based + 1}–${before} were written while it ran: ` +
          `its plan still held, so it was re-based onto them (no second summarizer call) and the events appended meanwhile were kept as they were. ` +
          `Before (revision ${before}) is the window it replaced, with those events (marked "appended meanwhile")`,
      );
      const marked = await ui.page.evaluate<string[]>(
        "[...document.querySelectorAll('.diff > div:first-child li')].filter((li) => li.querySelector('.badge.meanwhile')).map((li) => li.dataset.event)",
      );
      expect(marked).toEqual(['m1', 'm2']);
      expect(await ui.page.locator('.diff > div:last-child .badge.meanwhile').count()).toBe(0);
    } finally {
      await held.stop();
    }
    // A pass not re-based: its Before is the window it planned on.
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${SESSION}/c/${compaction.compactionId}`);
    await ui.page.locator('#based-on').waitFor();
    expect(await ui.page.locator('#based-on').innerText()).toBe(
      `${compaction.basedOnRevision}: the pass planned on the window at revision ${compaction.basedOnRevision} (what its strategy and summarizer were given), the Before below`,
    );
    expect(await ui.page.locator('.badge.meanwhile').count()).toBe(0);
  });
});
