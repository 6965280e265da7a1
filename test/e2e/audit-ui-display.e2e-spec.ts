/**
 * The audit page at `/ui` in a real browser (playwright-core driving Debian's Chromium, as in
 * audit-ui.e2e-spec.ts), on what an auditor must be able to trust:
 *  - stored text is shown as stored: bidi controls, zero-width and other invisible characters as
 *    visible markers `⟨U+202E⟩` (README "Audit page and typed client"), never applied, and each
 *    stored value a bidi isolate that does not reorder the page's text around it;
 *  - errors are shown in place: an unknown compaction in the link, or a service that stopped
 *    answering, keeps the session page on screen, says what to do, and offers Retry when trying
 *    again can help;
 *  - the timeline's heading counts log entries, conversation events and decision events apart.
 * Open mode (no API keys); one service, stopped and started again on the same port and data near
 * the end. Runs in about 15 s.
 */
import type { Page } from 'playwright-core';
import type { SummaryRequest } from '@lib/compaction';
import { ExtractiveSummarizer, type SummarizerOutcome } from '@lib/session';
import { startService } from '../support/service-harness';
import { describeWithChromium } from '../support/chromium';
import { useAuditPage } from '../support/audit-page';

const SESSION = 'bidi-audit';
/** Stored text whose RIGHT-TO-LEFT OVERRIDE would show "evil" as "live". */
const SPOOF = 'שלום \u202Eevil\u202C done';
/** A client id in Hebrew: without isolation the token count after it jumps to its left. */
const HEBREW_ID = 'שאלה';
/**
 * Characters the README says are shown as markers, one between each pair of letters: the bidi
 * controls, zero-width ones, word joiner, byte order mark, soft hyphen, a tag character, a line
 * separator, a carriage return, a variation selector after a letter (not an emoji).
 */
const HIDDEN = [
  0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c, 0x200b, 0x200c, 0x200d, 0x2060, 0xfeff, 0x00ad, 0xe0041,
  0x2028, 0x000d, 0xfe0f,
];
const HIDDEN_TEXT = `a${HIDDEN.map((cp) => String.fromCodePoint(cp)).join('a')}a`;
/** Text that makes {@link DownOnRequest} fail, after {@link FAILING_AFTER_MS}. */
const MODEL_DOWN = 'model down';
const FAILING_AFTER_MS = 150;

/** The extractive summarizer, which fails (after a while, as a model timing out) when asked to summarize {@link MODEL_DOWN}. */
class DownOnRequest extends ExtractiveSummarizer {
  override async summarize(request: SummaryRequest): Promise<SummarizerOutcome> {
    if (!request.toSummarize.some((t) => t.includes(MODEL_DOWN))) return super.summarize(request);
    await new Promise((resolve) => setTimeout(resolve, FAILING_AFTER_MS));
    return { ok: false, reason: 'model unavailable (test)', calls: 1, promptTokens: 0, completionTokens: 0 };
  }
}

/** Emoji whose variation selector and joiners are part of the picture (README: shown as they are). */
const EMOJI = 'ok ❤️ 👩‍💻 1️⃣';

/**
 * Left edges (CSS px) of the characters of `text` as laid out inside `selector`, in the text's
 * order; `text` is looked up in the element's text (its text nodes joined), so the check does not
 * depend on how the page splits it into elements.
 */
async function charLefts(page: Page, selector: string, text: string): Promise<number[]> {
  // Runs in the page (the test's TypeScript has no DOM types: the browser's objects are typed loosely).
  type TextNode = { data: string };
  return page.locator(selector).evaluate((root, wanted) => {
    const doc = root.ownerDocument as unknown as {
      createTreeWalker(root: unknown, what: number): { nextNode(): TextNode | null };
      createRange(): { setStart(n: TextNode, o: number): void; setEnd(n: TextNode, o: number): void; getBoundingClientRect(): { left: number } };
    };
    const nodes: TextNode[] = [];
    const walker = doc.createTreeWalker(root, 4 /* NodeFilter.SHOW_TEXT */);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) nodes.push(n);
    const joined = nodes.map((n) => n.data).join('');
    const start = joined.indexOf(wanted);
    if (start < 0) throw new Error(`"${wanted}" not in ${JSON.stringify(joined)}`);
    const lefts: number[] = [];
    for (let i = start; i < start + wanted.length; i++) {
      let offset = i;
      const node = nodes.find((n) => (offset < n.data.length ? true : ((offset -= n.data.length), false)))!;
      const range = doc.createRange();
      range.setStart(node, offset);
      range.setEnd(node, offset + 1);
      lefts.push(range.getBoundingClientRect().left);
    }
    return lefts;
  }, text);
}

describeWithChromium('audit page in a browser: stored text, errors in place, log counts', () => {
  const ui = useAuditPage({ summarizer: new DownOnRequest() });
  const { itInPage } = ui;
  const compactionIds: string[] = [];

  beforeAll(async () => {
    const path = { sessionId: SESSION };
    const appended = await ui.client.POST('/v1/sessions/{sessionId}/events', {
      params: { path },
      body: {
        userId: 'auditor',
        events: [
          { id: 'u1', type: 'user', text: SPOOF },
          { id: HEBREW_ID, type: 'assistant', text: 'a plain answer' },
          { id: 'c1', type: 'assistant', text: null, toolCalls: [{ id: 'call_1', name: 'look\u200Bup', arguments: '{"q":"\u2067x\u2069"}' }] },
          { id: 't1', type: 'tool', responses: [{ toolCallId: 'call_1', name: 'look\u200Bup', data: 'found \u202Dit' }] },
          { id: 'u2', type: 'user', text: HIDDEN_TEXT },
          { id: 'a2', type: 'assistant', text: EMOJI },
          { id: 'u3', type: 'user', text: 'one more' },
        ],
      },
    });
    expect(appended.response.status).toBe(201);
    const strategy = { type: 'recursive-summarization', maxEventsToKeep: 4, overlapSize: 0 } as const;
    for (const round of [1, 2]) {
      const { data } = await ui.client.POST('/v1/sessions/{sessionId}/compactions', { params: { path }, body: { strategy } });
      expect(data!.outcome).toBe('compacted');
      compactionIds.push(data!.compactionId!);
      const events = ['a question', 'an answer', 'another question', 'another answer'].map((text, i) => ({
        type: i % 2 ? 'assistant' : 'user',
        text: `${text} ${round}`,
      }));
      await ui.client.POST('/v1/sessions/{sessionId}/events', { params: { path }, body: { events: events as never } });
    }
  }, 120_000);

  itInPage('shows a stored U+202E as a visible marker and the text in stored order, not reversed', async () => {
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${SESSION}`);
    const row = ui.page.locator('#timeline li[data-event="u1"] .preview');
    await row.waitFor();
    expect(await row.innerText()).toBe('שלום ⟨U+202E⟩evil⟨U+202C⟩ done');
    // Laid out left to right as stored: e, v, i, l (an applied override would lay out l, i, v, e).
    const lefts = await charLefts(ui.page, '#timeline li[data-event="u1"] .preview', 'evil');
    expect(lefts).toEqual([...lefts].sort((a, b) => a - b));
    expect(new Set(lefts).size).toBe(4);
    // The marker is drawn (it takes room) and the page holds no bidi control as text.
    const marker = await charLefts(ui.page, '#timeline li[data-event="u1"] .preview', '⟨U+202E⟩');
    expect(Math.max(...marker) - Math.min(...marker)).toBeGreaterThan(20);
    const bodyText = await ui.page.locator('body').innerText();
    expect(bodyText).not.toMatch(/[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/);
  });

  itInPage('shows every invisible or format character of the documented set as a marker, emoji as they are', async () => {
    const expected = `a${HIDDEN.map((cp) => `⟨U+${cp.toString(16).toUpperCase().padStart(4, '0')}⟩`).join('a')}a`;
    expect(await ui.page.locator('#timeline li[data-event="u2"] .preview').innerText()).toBe(expected);
    expect(await ui.page.locator('#timeline li[data-event="a2"] .preview').innerText()).toBe(EMOJI);
    // Tool names, arguments and results are stored text too.
    expect(await ui.page.locator('#timeline li[data-event="c1"] .preview').innerText()).toBe('→ look⟨U+200B⟩up({"q":"⟨U+2067⟩x⟨U+2069⟩"})');
    expect(await ui.page.locator('#timeline li[data-event="t1"] .preview').innerText()).toBe('look⟨U+200B⟩up: found ⟨U+202D⟩it');
  });

  itInPage('isolates a stored value: the page text after a Hebrew id stays after it', async () => {
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${SESSION}/c/${compactionIds[0]}`);
    await ui.page.locator(`#diff[data-compaction="${compactionIds[0]}"]`).waitFor();
    const item = `#diff li[data-event="${HEBREW_ID}"] .muted`;
    const text = await ui.page.locator(item).first().innerText();
    const tokens = text.match(/· (\d+) cl100k_base/)![1];
    const hebrew = await charLefts(ui.page, item, HEBREW_ID);
    const after = await charLefts(ui.page, item, `· ${tokens} cl100k_base`);
    // "· 5 cl100k_base" follows the id on screen (without isolation the number runs into the Hebrew and shows left of it).
    expect(Math.min(...after)).toBeGreaterThan(Math.max(...hebrew));
    expect(after).toEqual([...after].sort((a, b) => a - b));
  });

  itInPage('heads the timeline with log entries, conversation events and decision events counted apart', async () => {
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${SESSION}`);
    await ui.page.locator('#timeline').waitFor();
    const { data: log } = await ui.client.GET('/v1/sessions/{sessionId}/events', { params: { path: { sessionId: SESSION }, query: { limit: '1000' } } });
    const { data: summary } = await ui.client.GET('/v1/sessions/{sessionId}', { params: { path: { sessionId: SESSION } } });
    const conversation = log!.events.filter((e) => e.type === 'ConversationEventAppended').length;
    const decisions = log!.events.filter((e) => ['EventsArchived', 'SummaryInserted', 'CompactionCompleted', 'CompactionFailed'].includes(e.type)).length;
    expect(conversation).toBe(summary!.eventCount);
    expect(decisions).toBe(6);
    const heading = await ui.page.locator('#timeline').locator('xpath=..').locator('h2').innerText();
    expect(heading).toBe(`Log timeline (${log!.events.length} log entries: ${conversation} conversation events, ${decisions} decision events)`);
    // The facts line names the same count with the same words.
    expect(await ui.page.locator('dl.facts').first().innerText()).toContain(`conversation events\n${summary!.eventCount}`);
  });

  itInPage(
    'shows a recorded automatic noop (a policy that cannot be met): its reason and that the trigger still fires, in the list, the timeline and the facts',
    async () => {
      const path = { sessionId: 'noop-audit' };
      const policy = { strategy: { type: 'token-count', maxTokens: 1000 }, trigger: { type: 'token-count', threshold: 50 }, estimator: 'chars' } as const;
      expect((await ui.client.PUT('/v1/sessions/{sessionId}/policy', { params: { path }, body: policy })).response.status).toBe(200);
      await ui.client.POST('/v1/sessions/{sessionId}/events', { params: { path }, body: { events: [{ id: 's1', type: 'system', text: 'x'.repeat(100) }] } });
      let recorded: string | undefined;
      for (let i = 0; i < 100 && !recorded; i++) {
        const { data } = await ui.client.GET('/v1/sessions/{sessionId}/compactions', { params: { path } });
        recorded = data?.compactions[0]?.compactionId;
        if (!recorded) await new Promise((r) => setTimeout(r, 50));
      }
      expect(recorded).toBeDefined();
      await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/noop-audit`);
      await ui.page.locator('#timeline').waitFor();
      expect(await ui.page.locator(`#compactions tr[data-compaction="${recorded}"]`).innerText()).toMatch(/noop\s*auto\s*within-limit\s*still fires/);
      expect(await ui.page.locator('#timeline li.decision', { hasText: 'compaction' }).innerText()).toMatch(
        /noop \(auto, token-count\): 108 → 108 chars, 0 archived, within-limit\s*trigger still fires/,
      );
      expect(await ui.page.locator('dl.facts').first().innerText()).toMatch(
        /compactions\n0 compacted, 0 failed, 1 recorded noop \(1 in the list\)\s*trigger still fires/,
      );
    },
  );

  itInPage('shows the tool call a recorded open-tool-call noop names (DESIGN §3.6), in the timeline and its facts', async () => {
    const path = { sessionId: 'pinned-audit' };
    const call = (w: string) => ({ id: `c${w}`, type: 'assistant', text: null, toolCalls: [{ id: `call${w}`, name: 'f', arguments: '{}' }] });
    const answer = (w: string) => ({ id: `r${w}`, type: 'tool', responses: [{ toolCallId: `call${w}`, name: 'f', data: 'ok' }] });
    // two writers: each answer lands after the other's next user message, which pins the session from the first call on
    const events = [{ id: 'uA', type: 'user', text: 'task A' }, call('A'), { id: 'uB', type: 'user', text: 'task B' }, call('B'), answer('A')];
    for (const e of events) await ui.client.POST('/v1/sessions/{sessionId}/events', { params: { path }, body: { events: [e] as never } });
    const policy = { strategy: { type: 'turn-window', maxTurns: 1 }, trigger: { type: 'turn-count', maxTurns: 1 } } as const;
    expect((await ui.client.PUT('/v1/sessions/{sessionId}/policy', { params: { path }, body: policy })).response.status).toBe(200);
    await ui.client.POST('/v1/sessions/{sessionId}/events', {
      params: { path },
      body: { events: [{ id: 'uC', type: 'user', text: 'task C' }, answer('B')] as never },
    });
    let recorded: { compactionId: string; toolCallId: string | null } | undefined;
    for (let i = 0; i < 100 && !recorded; i++) {
      const { data } = await ui.client.GET('/v1/sessions/{sessionId}/compactions', { params: { path } });
      recorded = data?.compactions[0];
      if (!recorded) await new Promise((r) => setTimeout(r, 50));
    }
    expect(recorded).toMatchObject({ outcome: 'noop', reason: 'open-tool-call', toolCallId: 'callA', eventId: 'cA' });
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/pinned-audit`);
    await ui.page.locator('#timeline').waitFor();
    expect(await ui.page.locator('#timeline li.decision', { hasText: 'compaction' }).innerText()).toMatch(/, open-tool-call \(tool call callA\)/);
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/pinned-audit/c/${recorded!.compactionId}`);
    await ui.page.locator('#held-back-by').waitFor();
    expect(await ui.page.locator('#held-back-by').innerText()).toBe('tool call callA in event cA');
  });

  itInPage('shows a failed compaction’s duration, the time its pass ran until it failed, in its facts', async () => {
    const path = { sessionId: 'failed-audit' };
    const events = ['a question', MODEL_DOWN, 'another question', 'another answer', 'a third question', 'a third answer'].map((text, i) => ({
      type: i % 2 ? 'assistant' : 'user',
      text,
    }));
    await ui.client.POST('/v1/sessions/{sessionId}/events', { params: { path }, body: { events: events as never } });
    const strategy = { type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 0 } as const;
    const { data } = await ui.client.POST('/v1/sessions/{sessionId}/compactions', { params: { path }, body: { strategy } });
    expect(data!.outcome).toBe('failed');
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/failed-audit/c/${data!.compactionId}`);
    const facts = ui.page.locator('#diff dl.facts');
    await facts.waitFor();
    const ms = /duration\n([\d,]+) ms until it failed/.exec(await facts.innerText())?.[1];
    expect(Number(ms?.replace(/,/g, ''))).toBeGreaterThanOrEqual(FAILING_AFTER_MS);
  });

  // newcomer ncui69 F3: a pass that wrote no summary (nothing to cut; a failed one) archived a superseded system message, shown only as "archived".
  itInPage('says wherever it marks a superseded system message archived by a pass without a summary why it went, and how much of "saved" it is', async () => {
    const sessionId = 'superseded-audit';
    const path = { sessionId };
    const turns = ['a question', MODEL_DOWN, 'another question', 'another answer'].map((text, i) => ({
      id: `q${i}`,
      type: i % 2 ? 'assistant' : 'user',
      text,
    }));
    await ui.client.POST('/v1/sessions/{sessionId}/events', {
      params: { path },
      body: {
        events: [
          { id: 'sys-a', type: 'system', text: 'Old policy: answer in full sentences.' },
          ...turns,
          { id: 'sys-b', type: 'system', text: 'New policy.' },
        ] as never,
      },
    });
    // Nothing to cut (4 real events, 10 kept): no summary, and sys-a, superseded by sys-b, archived.
    const nothingToCut = (
      await ui.client.POST('/v1/sessions/{sessionId}/compactions', {
        params: { path },
        body: { strategy: { type: 'recursive-summarization', maxEventsToKeep: 10, overlapSize: 0 } },
      })
    ).data!;
    expect(nothingToCut.outcome).toBe('compacted');
    expect(nothingToCut.archived).toEqual(['sys-a']);
    expect(nothingToCut.summary ?? null).toBeNull();
    // A failed pass (the summarizer is down for MODEL_DOWN) still archives sys-b, which sys-c supersedes (DESIGN §3.7).
    await ui.client.POST('/v1/sessions/{sessionId}/events', { params: { path }, body: { events: [{ id: 'sys-c', type: 'system', text: 'Newest policy.' }] } });
    const failed = (
      await ui.client.POST('/v1/sessions/{sessionId}/compactions', {
        params: { path },
        body: { strategy: { type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 0 } },
      })
    ).data!;
    expect(failed.outcome).toBe('failed');
    expect(failed.archived).toEqual(['sys-b']);
    const why = 'a superseded system message: a newer one replaced it; it was not sent to the model in the OpenAI rendering';
    for (const [pass, id] of [
      [nothingToCut, 'sys-a'],
      [failed, 'sys-b'],
    ] as const) {
      await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${sessionId}/c/${pass.compactionId}`);
      await ui.page.locator(`#diff[data-compaction="${pass.compactionId}"]`).waitFor();
      const before = ui.page.locator(`#diff li[data-event="${id}"][data-change=archived]`);
      expect(await before.locator('.kind').textContent()).toBe('system · superseded');
      expect(await before.locator('.superseded-note').textContent()).toBe(` ${why}`);
      const tokens = (
        await ui.client.GET('/v1/sessions/{sessionId}/compactions/{compactionId}/diff', { params: { path: { sessionId, compactionId: pass.compactionId! } } })
      ).data!.before.events.find((e) => e.id === id)!.tokens;
      expect(pass.tokensEstimatedSaved).toBe(tokens);
      expect(await ui.page.locator('#saved').innerText()).toBe(
        `${tokens} ${pass.estimator}, of which ${tokens} for a superseded system message the model was no longer sent (a newer one replaced it; not sent in the OpenAI rendering)`,
      );
      // The timeline: the row "archived by" it, and the compaction's row.
      expect(await ui.page.locator(`#timeline li[data-event="${id}"]`).innerText()).toContain(`archived by ${pass.compactionId!.slice(0, 8)}… ${why}`);
      expect(await ui.page.locator(`#timeline li[data-compaction="${pass.compactionId}"]`).innerText()).toContain(
        '1 archived (of which a superseded system message: a newer one replaced it, not sent to the model)',
      );
    }
    // A real event a pass cut is not called one.
    expect(await ui.page.locator('#timeline li[data-event="q0"] .superseded-note').count()).toBe(0);
  });

  // newcomer ncui69 F6: a valid 128-character id pushed the list's columns off screen and clipped the session page's heading.
  itInPage('wraps a 128-character session id: at 1280 px the list’s last column and the whole heading are on screen', async () => {
    const longId = `x${'L'.repeat(127)}`;
    await ui.client.POST('/v1/sessions/{sessionId}/events', {
      params: { path: { sessionId: longId } },
      body: { events: [{ id: 'l1', type: 'user', text: 'a session with a long id' }] },
    });
    await ui.page.setViewportSize({ width: 1280, height: 900 });
    try {
      await ui.page.goto(`${ui.harness.baseUrl}/ui#/`);
      await ui.page.locator(`#sessions a[href="#/s/${longId}"]`).waitFor();
      /** The right edges of the elements, and the viewport's width without its scroll bar. */
      const edges = (selector: string) =>
        ui.page.$$eval(selector, (els) => ({
          rights: els.map((el) => el.getBoundingClientRect().right),
          width: (els[0]?.ownerDocument.documentElement.clientWidth as number) ?? 0,
        }));
      const list = await edges('#sessions tr > :last-child');
      expect(list.rights.length).toBeGreaterThan(1);
      for (const right of list.rights) expect(right).toBeLessThanOrEqual(list.width);
      await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${longId}`);
      await ui.page.locator('#session-title').waitFor();
      const heading = await edges('#session-title');
      expect(heading.rights[0]).toBeLessThanOrEqual(heading.width);
      // the heading's text is not clipped inside it either
      expect(await ui.page.locator('#session-title').evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    } finally {
      await ui.page.setViewportSize({ width: 1440, height: 1000 });
    }
  });

  itInPage('says a link opens no page and which links do, instead of opening the session and ignoring the rest', async () => {
    const opened = async (hash: string) => {
      // A fresh load each time: the first render of a link the page cannot open shows its error in place of the page.
      await ui.page.goto('about:blank');
      await ui.page.goto(`${ui.harness.baseUrl}/ui${hash}`);
      await ui.page.locator('#session-title, #page-error').first().waitFor();
      return (await ui.page.locator('#page-error').count())
        ? await ui.page.locator('#page-error').innerText()
        : `session ${await ui.page.locator('#session-title').innerText()}`;
    };
    const sessionLinks = "a session's links are #/s/<session id>, followed by /c/<compaction id>, /e/<event id> or /r/<revision>";
    for (const hash of [`#/s/${SESSION}/r/-1`, `#/s/${SESSION}/y`, `#/s/${SESSION}/c/`, `#/s/${SESSION}/r/1/x`]) {
      const shown = await opened(hash);
      expect(shown).toContain(`This link opens no page: ${hash}: ${sessionLinks}`);
      expect(await ui.page.locator('#page-error a[href="#/"]').count()).toBe(1);
      // and the session the link names (newcomer ncverify70: "go to the session" linked only the list)
      expect(await ui.page.locator(`#page-error a[href="#/s/${SESSION}"]`).innerText()).toBe(`Session ${SESSION}`);
    }
    expect(await opened('#/s/..')).toContain('#/s/..: ".." is not a session id');
    expect(await opened('#/s/%2E')).toContain('"." is not a session id');
    expect(await opened('#/nothing-here')).toContain("#/nothing-here: the page's links are #/ (the session list), #/s/<session id> (a session) and #/erasures");
    // The links the page makes still open their pages, a trailing slash too.
    expect(await opened(`#/s/${SESSION}/`)).toBe(`session ${SESSION}`);
    expect(await opened(`#/s/${SESSION}/r/3`)).toBe(`session ${SESSION}`);
  });

  itInPage('draws no chart axes for a session without a window: it says there is none', async () => {
    const path = { sessionId: 'policy-only' };
    const set = await ui.client.PUT('/v1/sessions/{sessionId}/policy', {
      params: { path },
      body: { strategy: { type: 'sliding-window', maxEvents: 10 }, trigger: { type: 'token-count', threshold: 6000 } } as never,
    });
    expect(set.response.status).toBeLessThan(300);
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/policy-only`);
    await ui.page.locator('#chart').waitFor();
    expect(await ui.page.locator('#chart svg').count()).toBe(0);
    expect(await ui.page.locator('#chart').innerText()).toBe('No window yet.');
  });

  itInPage('keeps the session page for an unknown compaction in the link and shows the API’s message there', async () => {
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${SESSION}/c/not-a-compaction`);
    const alert = ui.page.locator('#diff-slot [role=alert]');
    await alert.waitFor();
    const { error, response } = await ui.client.GET('/v1/sessions/{sessionId}/compactions/{compactionId}/diff', {
      params: { path: { sessionId: SESSION, compactionId: 'not-a-compaction' } },
    });
    expect(response.status).toBe(404);
    expect(await alert.innerText()).toContain(error!.message);
    expect(await ui.page.locator('#session-title').innerText()).toBe(SESSION);
    expect(await ui.page.locator('#timeline li').count()).toBeGreaterThan(5);
    expect(await ui.page.locator('#compactions tbody tr').count()).toBe(2);
  });

  itInPage('with the service stopped, shows the failure in place with a Retry that works once it answers again', async () => {
    await ui.page.goto(`${ui.harness.baseUrl}/ui#/s/${SESSION}`);
    await ui.page.locator('#timeline').waitFor();
    const timelineBefore = await ui.page.locator('#timeline').innerText();
    const port = new URL(ui.harness.baseUrl).port;
    await ui.stopService();

    await ui.page.locator(`#compactions tr[data-compaction="${compactionIds[1]}"]`).click();
    const alert = ui.page.locator('#diff-slot [role=alert]');
    await alert.waitFor();
    expect(await alert.innerText()).toContain(`does not answer at ${ui.harness.baseUrl}: is it running?`);
    expect(await ui.page.locator('#timeline').innerText()).toBe(timelineBefore);
    expect(await ui.page.locator('#session-title').innerText()).toBe(SESSION);

    // Going to the session list while it is down keeps this page too, with the error in a banner.
    await ui.page.locator('a[href="#/"]').first().click();
    const banner = ui.page.locator('#banner [role=alert]');
    await banner.waitFor();
    expect(await banner.innerText()).toContain('is it running?');
    expect(await ui.page.locator('#timeline').innerText()).toBe(timelineBefore);
    await ui.page.goBack();
    await ui.page.locator('#banner').waitFor({ state: 'hidden' });
    await alert.waitFor();

    // Started again on the same port and data: Retry shows the compaction.
    const again = await startService({ dataDir: ui.harness.dataDir });
    await again.service.app.listen(Number(port), '127.0.0.1');
    ui.replaceHarness({ ...ui.harness, ...again });
    await ui.page.locator('#diff-slot button', { hasText: 'Retry' }).click();
    await ui.page.locator(`#diff[data-compaction="${compactionIds[1]}"]`).waitFor();
    expect(await ui.page.locator('#diff-slot [role=alert]').count()).toBe(0);
  });
});
