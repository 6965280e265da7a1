// @ts-check
/**
 * The audit page at `/ui`: plain ES module, no build step, type-checked against the generated
 * API types (`npm run typecheck`). Routes (in the URL hash):
 *   #/                         session list with search
 *   #/s/<sessionId>            session page: facts, window-token chart, compactions, timeline, recall
 *   #/s/<sessionId>/c/<id>     the same with compaction <id> selected (its before/after diff);
 *                              an erased session id says when it was erased ({@link showErased})
 *   #/s/<sessionId>/e/<event>  the same, its timeline gone to that event's row (a recall hit's row link)
 *   #/s/<sessionId>/r/<rev>    the same, its timeline gone to revision <rev> as "Go to revision" does
 *                              (a compaction's policy revision)
 *   #/erasures                 the tenant's erasures, without content ({@link renderErasures})
 * With API keys configured the key is asked once and kept in sessionStorage (the header names it by
 * its last 4 characters, {@link keyInUse}); without one the page shows the prompt and no data ("Forget API key" takes every shown value off the screen at once).
 * Whether the service needs a key is read from /health ({@link readMode}) before any /v1 read, so a first visit
 * without a key shows the prompt without a request answered 401 (a failed request in the browser's console).
 *
 * A session page is one state: the summary is read first and the log and compaction history are
 * cut at its revision ({@link readSession}), so its figures agree while the session is written
 * to. While a route is read, a loading line above the page says what (with the log entries read
 * so far); the page on screen stays until the answer. Only the latest read counts: an answer for a
 * route, list filter, "Load more" or recall search that a newer one replaced is dropped, and
 * "Load more" is ignored while its page is read. Token figures name their estimator; the chart is
 * drawn in one, naming the compactions counted in another. Long arrays are never spread into one
 * call (past ~120,000 arguments that overflows the call stack): loops and {@link fill} instead;
 * the timeline draws one page of its rows at a time ({@link timeline}), whatever the log's length.
 *
 * Stored data (texts, tool names, arguments and results, summaries, ids, snippets, error messages
 * that echo them) is shown only through {@link stored} / {@link revealed}: each value its own bidi
 * isolate, its invisible and format characters as visible markers such as ⟨U+202E⟩ (the set:
 * {@link HIDDEN}); never as HTML.
 *
 * Every time on the page (a session's last activity, a log entry's recorded time and its client's
 * `createdAt`, a compaction's time, a late answer's archiving, a recall hit's time) is written one
 * way, {@link timeOf}: date and time in UTC to the millisecond, the zone named
 * (`2026-03-08 07:30:00.000 UTC`), whatever the browser's zone; its tooltip keeps the full value.
 *
 * Errors are shown in place and never replace a page on screen: a failed compaction diff in the
 * diff panel, a failed recall in the results, a failed route (session list, another session) in a
 * banner above the page; each with the service's message (or, with no answer, "the service does
 * not answer at <origin>: is it running?") and a Retry button when trying again can help. Only
 * the first page read, with nothing on screen yet, shows its error in place of the page.
 */

/** @typedef {import('../../../libs/client/src/openapi-types').components['schemas']} Schemas */
/** @typedef {Schemas['SessionSummary']} SessionSummary */
/** @typedef {Schemas['CompactionHistoryItem']} CompactionItem */
/** @typedef {Schemas['CompactionDiff']} CompactionDiff */
/** @typedef {Schemas['LogPage']['events'][number]} LogEntry */
/** @typedef {Schemas['RecallPage']} RecallPage */
/** @typedef {{ tag?: string } & Record<string, unknown>} Attrs */

/** What a "trigger still fires" mark means (DESIGN §3.5). */
const stillFiresTitle =
  'the pass left the trigger firing (the part no strategy may archive, such as the pinned system message and the newest turn, is already over it): automatic passes wait until the window grows by a quarter of the threshold or turn limit, and record one noop per such wait';

/** What a "trigger after: no longer fires" fact means (the API's `triggerStillFires: false`). */
const quietTitle = 'the pass brought the window under its trigger: right after it the trigger no longer fires (triggerStillFires: false)';

const KEY_STORAGE = 'session-audit.apiKey';
const main = /** @type {HTMLElement} */ (document.getElementById('main'));

/** Thrown when the service needs a key (401). */
class NeedsKey extends Error {}

/** A link of the page that opens no page ({@link unknownRouteMessage}); `sessionId`: the session it names, whose page it may have meant. */
class UnknownRoute extends Error {
  /** @param {string} message @param {string} [sessionId] */
  constructor(message, sessionId) {
    super(message);
    this.sessionId = sessionId;
  }
}

/**
 * The links an error offers besides Retry: for a link that opens no page but names a session (`#/s/x/y`), that
 * session's page (newcomer ncverify70: the message said "go to the session" and linked only the list).
 * @param {unknown} err
 * @returns {Array<Node | string>}
 */
function errorLinks(err) {
  return err instanceof UnknownRoute && err.sessionId !== undefined
    ? [h('a', { href: sessionHref(err.sessionId) }, 'Session ', stored(err.sessionId)), ' ']
    : [];
}

/** The service answered with an error status (other than 401): `status`, and the API's `code` and `message`. */
class ApiError extends Error {
  /**
   * @param {number} status HTTP status @param {string} code the API's error code @param {string} message the API's message
   * @param {string} [erasedAt] `session_not_found` of an erased session id: when it was erased (the answer's `erasedAt`)
   */
  constructor(status, code, message, erasedAt) {
    super(`${message} (${status} ${code})`);
    this.status = status;
    this.code = code;
    /** the API's message, as answered */
    this.detail = message;
    this.erasedAt = erasedAt;
  }
}

/**
 * The API key this tab sends, as the page may show it: by its last 4 characters (`…3c4d`), never
 * the whole key (the service's keys have at least 8 characters; a shorter one typed is named by its
 * length only). The service tells a client neither its key's label (`API_KEYS#2`) nor its tenant.
 * Undefined without a key.
 * @returns {string | undefined}
 */
function keyInUse() {
  const key = sessionStorage.getItem(KEY_STORAGE);
  if (!key) return undefined;
  return key.length >= 8 ? `…${key.slice(-4)}` : `a key of ${key.length} characters`;
}

/** Shows the key in use beside the mode in the header (`key in use: …3c4d`, {@link keyInUse}); hidden without a key. */
function showKeyInUse() {
  const shown = keyInUse();
  const el = /** @type {HTMLElement} */ (document.getElementById('key-in-use'));
  el.hidden = shown === undefined;
  el.textContent = shown === undefined ? '' : `key in use: ${shown}`;
  el.title =
    shown === undefined
      ? ''
      : "the API key this tab sends, by its last 4 characters (the service tells a client neither its key's label nor its tenant): each key sees its own tenant's sessions only";
}

/**
 * `err` with the key in use named when it says a session does not exist (404 `session_not_found`
 * without `erasedAt`) and a key is in use: every key reads its own tenant only, so a session of
 * another tenant is answered so too (`session "s" does not exist with the key in use (…3c4d: …):
 * no event was appended to it …`). Any other error is returned as it is.
 * @param {unknown} err
 * @returns {unknown}
 */
function withKeyInUse(err) {
  const key = keyInUse();
  if (!(err instanceof ApiError) || err.code !== 'session_not_found' || err.erasedAt !== undefined || key === undefined) return err;
  const note = ` with the key in use (${key}: a session of another tenant is answered so too; with several keys, try another one)`;
  const at = err.detail.indexOf(' does not exist');
  const message =
    at < 0 ? `${err.detail}${note}` : `${err.detail.slice(0, at + ' does not exist'.length)}${note}${err.detail.slice(at + ' does not exist'.length)}`;
  return new ApiError(err.status, err.code, message);
}

/** The request got no answer at all (`fetch` rejected: the service is stopped, unreachable, or the connection broke). */
class Unreachable extends Error {}

/**
 * GET a JSON route of the service with the stored key, past the browser's cache (`cache: 'no-store'`;
 * the service marks these answers `no-store` too: no copy outlives "Forget API key" or an erasure).
 * Throws {@link NeedsKey} (401), {@link ApiError} (another error status, or an answer that is not
 * JSON) or {@link Unreachable} (no answer).
 * @template T
 * @param {string} path
 * @returns {Promise<T>}
 */
async function api(path) {
  const key = sessionStorage.getItem(KEY_STORAGE);
  /** @type {Response} */
  let res;
  /** @type {any} */
  let body;
  try {
    res = await fetch(path, { headers: key ? { authorization: `Bearer ${key}` } : {}, cache: 'no-store' });
    if (res.status === 401) throw new NeedsKey(key ? 'the service refused this API key' : 'this service needs an API key');
    body = await res.text();
  } catch (err) {
    if (err instanceof NeedsKey) throw err;
    throw new Unreachable(`the service does not answer at ${location.origin}: is it running? (${String(/** @type {Error} */ (err)?.message ?? err)})`);
  }
  try {
    body = JSON.parse(body);
  } catch {
    throw new ApiError(res.status, 'not_json', `the service answered ${res.status} ${res.statusText} with a body that is not JSON`);
  }
  if (!res.ok)
    throw new ApiError(
      res.status,
      String(body?.code ?? 'error'),
      String(body?.message ?? res.statusText),
      typeof body?.erasedAt === 'string' ? body.erasedAt : undefined,
    );
  return body;
}

/**
 * A page of a paging with cursors (the session list's "Load more", a compaction history, recall's
 * "More hits"), or, when the service refuses the page's `cursor` because another release of it
 * made the cursor (400 `cursor_expired`: the service was upgraded, or rolled back, between the
 * pages, e.g. during a rolling upgrade), the paging's first page instead, `restarted` true. The one
 * rule of every paging on the page: its caller then replaces what it showed of the paging with that
 * first page (nothing shown twice) and says so ({@link RESTARTED}). Other errors are thrown as
 * {@link api} throws them; so is an error of the first page read again.
 * @template T
 * @param {(cursor: string | undefined) => Promise<T>} read reads the page after `cursor` (undefined: the first page)
 * @param {string | undefined} cursor the previous page's `nextCursor` (undefined: the first page)
 * @returns {Promise<{ page: T, restarted: boolean }>}
 */
async function pageOrRestart(read, cursor) {
  try {
    return { page: await read(cursor), restarted: false };
  } catch (err) {
    if (cursor === undefined || !(err instanceof ApiError) || err.code !== 'cursor_expired') throw err;
    return { page: await read(undefined), restarted: true };
  }
}

/** What a paging that {@link pageOrRestart} started again from its first page says, before what it shows now. */
const RESTARTED = 'the service was upgraded';

/**
 * What went wrong, for a person: the message, and whether trying again can help (no answer, rate
 * limit, 5xx, an answer that is not JSON; not a 404 or another refusal of the request itself).
 * @param {unknown} err
 * @returns {{ message: string, retryable: boolean }}
 */
function problem(err) {
  if (err instanceof Unreachable) return { message: err.message, retryable: true };
  if (err instanceof ApiError) return { message: err.message, retryable: err.status === 429 || err.status >= 500 || err.code === 'not_json' };
  return { message: String(/** @type {Error} */ (err)?.message ?? err), retryable: false };
}

/**
 * What the "Go to time" box shows when the service refuses the time `typed`: the service's message
 * ({@link problem}). The service writes its advice for a query string written by hand, a `+` as
 * `%2B`, while the box sends what is typed, its `+` encoded (typing `%2B` would be refused again):
 * - advice on what to fix in the time typed (the service's `dateTimeFix`: a day its month does not
 *   have, `2026-02-30T10:00:00+02:00`; the zone missing; seconds missing; …) is shown with each
 *   `%2B` written `+`, e.g. "there is no day 30 in February 2026 (it has 28 days) (e.g.
 *   2026-02-28T10:00:00+02:00)";
 * - the general message (no fix named) and advice on a `+` that arrived as a space (a space typed
 *   where the `+` goes) are replaced by the box's own hint of what to type, with the service's
 *   status and code.
 * @param {unknown} err @param {string} typed
 * @returns {string}
 */
function timeRefusal(err, typed) {
  const { message } = problem(err);
  // The time typed is compared with the store's recorded times: a client time (earlier) is refused so.
  if (err instanceof ApiError && err.code === 'time_out_of_range')
    return `${message}; "Go to time" goes by the store's recorded time, not the client time a row shows`;
  if (!(err instanceof ApiError) || !message.includes('%2B')) return message;
  // dateTimeFix's messages name the fault after "date-time: "; the general one does not.
  if (message.includes('date-time: ') && !message.includes('arrived as a space')) return message.replaceAll('%2B', '+');
  return (
    `atTime: "${typed}" is not a date-time the service reads: type it with its date, time and zone, ` +
    `e.g. 2026-01-31T12:00:00Z (UTC) or 2026-01-31T17:30:00+05:30 (type the "+" itself) (${err.status} ${err.code})`
  );
}

/**
 * An error shown in place (in the panel that failed, or the banner): what could not be done, the
 * message (stored text: it may echo ids from the link), a Retry button when trying again can help,
 * and `extra` actions.
 * @param {string | Array<Node | string>} what e.g. "Compaction 1b2c… could not be shown"
 * @param {unknown} err
 * @param {() => void} retry
 * @param {Array<Node | string>} [extra]
 * @returns {HTMLElement}
 */
function errorBox(what, err, retry, extra = []) {
  const { message, retryable } = problem(err);
  return h(
    'div',
    { class: 'error-box', role: 'alert' },
    h('p', { class: 'error' }, what, ': ', stored(message)),
    h('p', { class: 'actions' }, retryable ? h('button', { type: 'button', class: 'retry', onclick: () => retry() }, 'Retry') : null, extra),
  );
}

const banner = /** @type {HTMLElement} */ (document.getElementById('banner'));

/**
 * Shows an error above the page without touching what is on screen.
 * @param {string | Array<Node | string>} what @param {unknown} err @param {() => void} retry
 */
function showBanner(what, err, retry) {
  banner.replaceChildren(
    errorBox(what, err, retry, [...errorLinks(err), h('button', { type: 'button', class: 'dismiss', onclick: () => clearBanner() }, 'Dismiss')]),
  );
  banner.hidden = false;
}

function clearBanner() {
  banner.replaceChildren();
  banner.hidden = true;
}

const loadingLine = /** @type {HTMLElement} */ (document.getElementById('loading'));

/**
 * Says what is being read, in the loading line above the page; the page on screen stays (dimmed,
 * `aria-busy`) until the answer replaces it or an error shows in the banner. The line is for the
 * eyes only (not a live region: its progress, rewritten after every log page, would be said each
 * time); a screen reader hears once, when the read is done ({@link announce}).
 * @param {string | Array<Node | string>} what e.g. "Reading session big-1: 12,000 log entries read…"
 */
function showLoading(what) {
  loadingLine.replaceChildren(h('span', {}, what));
  loadingLine.hidden = false;
  main.setAttribute('aria-busy', 'true');
}

/** Hides the loading line. */
function clearLoading() {
  loadingLine.replaceChildren();
  loadingLine.hidden = true;
  main.removeAttribute('aria-busy');
}

const announcer = /** @type {HTMLElement} */ (document.getElementById('announce'));

/**
 * Says `text` to screen readers (the page's polite live region `#announce`, off screen): what a
 * keyboard action did where no visible status says it (a session read, a compaction's details
 * opened or closed). The region is emptied first, so the same words said twice are said again.
 * @param {string} text
 */
function announce(text) {
  clearAnnouncement();
  saying = setTimeout(() => (announcer.textContent = text), 50);
}

/** @type {ReturnType<typeof setTimeout> | undefined} the announcement on its way ({@link announce}) */
let saying;

/** Empties the announcer, and drops an announcement on its way (it may name the tenant's data: "Forget API key"). */
function clearAnnouncement() {
  clearTimeout(saying);
  announcer.textContent = '';
}

/**
 * Moves keyboard focus to `el` (a row or heading becomes focusable by script only, `tabindex="-1"`:
 * not a Tab stop; a link or button stays as it is), without scrolling the page unless `scroll` (the
 * caller brings a row into view where it belongs). Nothing happens for an element not in the page.
 * @param {HTMLElement | null | undefined} el
 * @param {boolean} [scroll] whether the page scrolls to it (a new page's heading)
 */
function focusOn(el, scroll = false) {
  if (!el || !el.isConnected) return;
  // A link or button keeps its Tab stop; anything else becomes focusable by script only.
  if (el.tabIndex < 0 && !el.hasAttribute('tabindex')) el.setAttribute('tabindex', '-1');
  el.focus({ preventScroll: !scroll });
}

/**
 * Creates an element: `h('td', { class: 'num' }, 12)`. Strings are text (never HTML).
 * @param {string} tag
 * @param {Record<string, string | boolean | ((e: Event) => void) | undefined>} [attrs]
 * @param {...(Node | string | number | null | undefined | false | Array<Node | string>)} children
 * @returns {HTMLElement}
 */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.replace(/^on/, ''), value);
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === 'object' ? child : String(child));
  }
  return el;
}

/**
 * Replaces the children of `parent` with `nodes`, appended one at a time: never spread into one
 * call, as an array of more than about 120,000 arguments overflows the call stack.
 * @param {Element} parent
 * @param {Iterable<Node | string>} nodes
 */
function fill(parent, nodes) {
  const fragment = document.createDocumentFragment();
  for (const node of nodes) fragment.append(node);
  parent.replaceChildren(fragment);
}

// ---- stored text ------------------------------------------------------------------------------

/**
 * Characters an audit page must not pass to the browser as they are, because they are invisible
 * or change how the text around them is ordered: every control (Cc) but tab and line feed, every
 * format character (Cf: the bidi embeddings, overrides, isolates and marks U+202A–U+202E,
 * U+2066–U+2069, U+200E, U+200F, U+061C; zero-width space, non-joiner and joiner U+200B–U+200D;
 * word joiner and invisible operators U+2060–U+2064; U+FEFF; soft hyphen U+00AD; tag characters
 * U+E0000–U+E007F; the Arabic number signs U+0600–U+0605; …), the line and paragraph separators
 * U+2028 and U+2029, every other default-ignorable code point (variation selectors U+FE00–U+FE0F
 * and U+E0100–U+E01EF, Hangul fillers, combining grapheme joiner U+034F, Mongolian variation
 * selectors, …) and lone surrogates. Emoji are the one exception: see {@link emojiPart}.
 */
const HIDDEN = /(?![\t\n])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\p{Cs}]/gu;
const EMOJI = /^\p{Emoji}$/u;
const PICTOGRAPH = /^[\p{Extended_Pictographic}\p{Emoji_Modifier}]$/u;

/** Names of the hidden characters an auditor meets most, for the marker's tooltip. */
/** @type {Record<number, string>} */
const HIDDEN_NAMES = {
  0x00ad: 'SOFT HYPHEN',
  0x061c: 'ARABIC LETTER MARK',
  0x200b: 'ZERO WIDTH SPACE',
  0x200c: 'ZERO WIDTH NON-JOINER',
  0x200d: 'ZERO WIDTH JOINER',
  0x200e: 'LEFT-TO-RIGHT MARK',
  0x200f: 'RIGHT-TO-LEFT MARK',
  0x2028: 'LINE SEPARATOR',
  0x2029: 'PARAGRAPH SEPARATOR',
  0x202a: 'LEFT-TO-RIGHT EMBEDDING',
  0x202b: 'RIGHT-TO-LEFT EMBEDDING',
  0x202c: 'POP DIRECTIONAL FORMATTING',
  0x202d: 'LEFT-TO-RIGHT OVERRIDE',
  0x202e: 'RIGHT-TO-LEFT OVERRIDE',
  0x2060: 'WORD JOINER',
  0x2066: 'LEFT-TO-RIGHT ISOLATE',
  0x2067: 'RIGHT-TO-LEFT ISOLATE',
  0x2068: 'FIRST STRONG ISOLATE',
  0x2069: 'POP DIRECTIONAL ISOLATE',
  0xfeff: 'ZERO WIDTH NO-BREAK SPACE (BYTE ORDER MARK)',
};

/**
 * The code point of `text` that ends just before UTF-16 index `i`, as a string ('' at the start).
 * @param {string} text @param {number} i
 */
function codePointBefore(text, i) {
  if (i <= 0) return '';
  const low = text.charCodeAt(i - 1);
  const high = i >= 2 ? text.charCodeAt(i - 2) : 0;
  return low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff ? text.slice(i - 2, i) : text.slice(i - 1, i);
}

/**
 * Whether the hidden character `c` at UTF-16 index `i` of `text` is part of an emoji and shown as
 * it is: a text or emoji variation selector (U+FE0E, U+FE0F) right after an emoji character (❤️;
 * after a digit, # or * only when the keycap U+20E3 follows: 1️⃣), or a zero-width joiner between
 * two pictographs (👩‍💻, ❤️‍🔥). Each carries at most one bit, and no run of them can hide text;
 * a second selector, or a joiner anywhere else, is shown as a marker.
 * @param {string} text @param {number} i @param {string} c
 */
function emojiPart(text, i, c) {
  const before = codePointBefore(text, i);
  const next = text.codePointAt(i + c.length);
  const after = next === undefined ? '' : String.fromCodePoint(next);
  if (c === '\uFE0E' || c === '\uFE0F') return EMOJI.test(before) && (!/^[0-9#*]$/.test(before) || after === '\u20E3');
  if (c === '\u200D') {
    const base = before === '\uFE0F' ? codePointBefore(text, i - 1) : before;
    return PICTOGRAPH.test(base) && PICTOGRAPH.test(after);
  }
  return false;
}

/**
 * `text` cut into what is shown as it is (strings) and the hidden characters ({@link HIDDEN}),
 * each as `{ code: 'U+202E', name }`. The one place that decides what the page shows of stored text.
 * @param {string} text
 * @returns {Array<string | { code: string, name: string | undefined }>}
 */
function reveal(text) {
  /** @type {Array<string | { code: string, name: string | undefined }>} */
  const parts = [];
  let from = 0;
  for (const match of text.matchAll(HIDDEN)) {
    const i = /** @type {number} */ (match.index);
    const c = match[0];
    if (emojiPart(text, i, c)) continue;
    if (i > from) parts.push(text.slice(from, i));
    const cp = /** @type {number} */ (c.codePointAt(0));
    parts.push({ code: `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`, name: HIDDEN_NAMES[cp] });
    from = i + c.length;
  }
  if (from < text.length) parts.push(text.slice(from));
  return parts;
}

/**
 * Stored text (event text, tool names, arguments and results, summaries, ids, snippets, error
 * messages echoing them) as nodes: each hidden character becomes a visible marker
 * `<span class="hidden-char" dir="ltr">⟨U+202E⟩</span>` (isolated, so it reads the same in
 * right-to-left text), the rest stays text (never HTML).
 * @param {string} text
 * @returns {Array<Node | string>}
 */
function revealed(text) {
  return reveal(text).map((part) =>
    typeof part === 'string'
      ? part
      : h(
          'span',
          { class: 'hidden-char', dir: 'ltr', title: part.name ? `${part.code} ${part.name}` : `${part.code} (invisible character)` },
          `⟨${part.code}⟩`,
        ),
  );
}

/**
 * `text` with its hidden characters written `⟨U+202E⟩`, for places that take only a string
 * (tooltips).
 * @param {string} text
 */
const revealedText = (text) =>
  reveal(text)
    .map((part) => (typeof part === 'string' ? part : `⟨${part.code}⟩`))
    .join('');

/**
 * Shows a value from the service's data: an element of its own with `dir="auto"` (a bidi
 * isolate: its direction comes from its first strong letter, and neither it nor the page's text
 * around it reorders the other), its hidden characters as markers ({@link revealed}).
 * @param {string | number | null | undefined} value
 * @param {string} [tag] `bdi` (inline, the default) or a block such as `div`
 * @param {Record<string, string>} [attrs]
 * @returns {HTMLElement}
 */
function stored(value, tag = 'bdi', attrs = {}) {
  return h(tag, { ...attrs, dir: 'auto', class: `stored${attrs.class ? ` ${attrs.class}` : ''}` }, revealed(String(value ?? '')));
}

/**
 * `text` cut to at most `max` UTF-16 code units without splitting a surrogate pair, and whether it was cut.
 * @param {string} text @param {number} max
 * @returns {[string, boolean]}
 */
function clip(text, max) {
  if (text.length <= max) return [text, false];
  const c = text.charCodeAt(max - 1);
  return [text.slice(0, c >= 0xd800 && c <= 0xdbff ? max - 1 : max), true];
}

/** @type {Record<string, string>} */
const ENTITIES = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };

/**
 * A recall snippet as nodes: the service HTML-escapes the excerpt and wraps matched words in
 * <mark>…</mark>; the text is unescaped and shown as stored text (never as HTML, hidden
 * characters as markers), the whole snippet one bidi isolate.
 * @param {string} html
 */
function snippet(html) {
  const out = stored('', 'bdi', { class: 'preview' });
  html.split(/(<mark>|<\/mark>)/).reduce((inMark, part) => {
    if (part === '<mark>') return true;
    if (part === '</mark>') return false;
    const text = revealed(part.replace(/&(amp|lt|gt|quot|#39);/g, (m) => ENTITIES[m] ?? m));
    if (inMark) out.append(h('mark', {}, text));
    else for (const node of text) out.append(node);
    return inMark;
  }, false);
  return out;
}

/**
 * A strategy or trigger in one short line: its type and numeric parameters (prompts left out).
 * @param {Record<string, unknown> & { type: string }} value
 * @returns {string}
 */
function brief(value) {
  /** @type {string[]} */
  const params = Object.entries(value)
    .filter(([k, v]) => k !== 'type' && typeof v !== 'string')
    .map(([k, v]) => `${k} ${Array.isArray(v) ? v.map((/** @type {any} */ x) => brief(x)).join(', ') : v}`);
  return params.length ? `${value.type} (${params.join(', ')})` : value.type;
}

/**
 * The details' rows of a summarizing strategy's own prompts (`systemPrompt`: what the model is told
 * to keep and drop; `shadowPrompt`: the user side of the summary in the window), each whole as
 * stored (a default the service filled in shows too); none for a strategy without them. A pass of
 * the extractive summarizer, which sends no prompt, labels the first `summarizer prompt (not used
 * by the extractive summarizer: it sends no prompt)` (newcomer ncui69 F5).
 * @param {Record<string, unknown>} strategy
 * @param {boolean} [extractive] whether the pass's summarizer was the extractive one
 * @returns {Node[]}
 */
function promptRows(strategy, extractive = false) {
  return [
    ['systemPrompt', extractive ? 'summarizer prompt (not used by the extractive summarizer: it sends no prompt)' : 'summarizer prompt'],
    ['shadowPrompt', 'shadow prompt'],
  ].flatMap(([key, label]) =>
    typeof strategy[key] === 'string' ? [h('div', {}, h('dt', {}, label), h('dd', { class: 'prompt' }, stored(/** @type {string} */ (strategy[key]))))] : [],
  );
}

/**
 * Why a compaction archived a superseded system message (DESIGN §3.2), wherever the page marks one archived.
 */
const SUPERSEDED_WHY = 'a superseded system message: a newer one replaced it; it was not sent to the model in the OpenAI rendering';

/** Why a late answer's row is marked archived after the compaction that archived it: its "on arrival" note (newcomer ncaudit72 F3). */
const ON_ARRIVAL_WHY = 'a late answer to a call that compaction had archived';

/**
 * Whether a log entry is a stored system message that is not a notice (DESIGN §3.2). The pinned
 * one, the latest, is never archived: such a message a compaction archived was a superseded one,
 * which every pass archives, a failed one (§3.7) or one with nothing to cut included, with no
 * summary covering it (newcomer ncui69 F3). The one rule the page tells them apart by.
 * @param {LogEntry | undefined} entry
 */
function isStoredSystem(entry) {
  return entry?.type === 'ConversationEventAppended' && entry.kind === 'system' && /** @type {any} */ (entry.data)?.event?.notice !== true;
}

/** @typedef {keyof NonNullable<CompactionItem['archivedBecause']>} ArchiveReason */

/**
 * What the page calls each rule that archives an event (a compaction's `archivedBecause`): a short
 * tag and its tooltip (newcomer ncui69 F2).
 * @type {Record<ArchiveReason, { tag: string, title: string }>}
 */
const ARCHIVE_REASONS = {
  strategyCut: { tag: "strategy's cut", title: "before the strategy's own cut (DESIGN §3.4)" },
  turnStart: { tag: 'cut moved to the turn start', title: 'the strategy kept it; the kept part must start at a user event, DESIGN §3.3.1' },
  supersededSystem: { tag: 'superseded system message', title: SUPERSEDED_WHY },
  replacedSummaries: { tag: 'summary replaced', title: 'an earlier summary, folded into the new one' },
};

/**
 * Why a compaction archived each of its `archivedIds`: the rule its `archivedBecause` names; for a
 * decision recorded before it was (null), the superseded system messages only ({@link
 * isStoredSystem}), the others unknown (absent). The one place the page decides an event's reason.
 * @param {{ archivedIds: ReadonlyArray<string>, archivedBecause?: CompactionItem['archivedBecause'] }} compaction
 * @param {ReadonlyMap<string, LogEntry>} events the page's log entries by event id
 * @returns {Map<string, ArchiveReason>}
 */
function archiveReasons(compaction, events) {
  /** @type {Map<string, ArchiveReason>} */
  const reasons = new Map();
  const because = compaction.archivedBecause;
  if (because)
    for (const reason of /** @type {ArchiveReason[]} */ (Object.keys(ARCHIVE_REASONS))) for (const id of because[reason] ?? []) reasons.set(id, reason);
  else for (const id of compaction.archivedIds) if (isStoredSystem(events.get(id))) reasons.set(id, 'supersededSystem');
  return reasons;
}

/**
 * The events of a compaction's `archivedIds` that were superseded system messages ({@link archiveReasons}), in their order.
 * @param {{ archivedIds: ReadonlyArray<string>, archivedBecause?: CompactionItem['archivedBecause'] }} compaction
 * @param {ReadonlyMap<string, LogEntry>} events the page's log entries by event id
 */
function supersededOf(compaction, events) {
  const reasons = archiveReasons(compaction, events);
  return compaction.archivedIds.filter((id) => reasons.get(id) === 'supersededSystem');
}

/**
 * A failed pass's line saying what it had planned (its `plannedArchivedIds`): `planned to archive 5
 * events (sys1, u1, a1, u2 and 1 more) and summarize 4 of them; the summarizer failed, so only the
 * superseded system message was archived` (newcomer ncui69 F2). Null for any other pass, and for a
 * failure recorded before failures carried it.
 * @param {CompactionItem} item @param {ReadonlyArray<string>} superseded the ones it archived ({@link supersededOf})
 * @returns {HTMLElement | null}
 */
function plannedText(item, superseded) {
  const planned = item.plannedArchivedIds;
  if (item.outcome !== 'failed' || !planned || planned.length === 0) return null;
  const FIRST = 4;
  const shown = planned.slice(0, FIRST);
  const summarized = planned.filter((id) => !superseded.includes(id)).length;
  const archived = item.archivedIds.length;
  return h(
    'p',
    { class: 'muted', id: 'planned-archive' },
    `planned to archive ${fmt(planned.length)} event${planned.length === 1 ? '' : 's'} (`,
    ...shown.flatMap((id, i) => (i === 0 ? [stored(id)] : [', ', stored(id)])),
    planned.length > FIRST ? ` and ${fmt(planned.length - FIRST)} more` : '',
    `) and summarize ${summarized === planned.length ? (planned.length === 1 ? 'it' : 'them') : `${fmt(summarized)} of them`}; the summarizer failed, so `,
    archived === 0
      ? 'nothing was archived'
      : `only the ${archived === 1 ? 'superseded system message was' : `${fmt(archived)} superseded system messages were`} archived`,
  );
}

/**
 * The events a summarizing pass archived without its summary covering them: the superseded system
 * messages ({@link supersededOf}), which leave the window with the pass (newcomer ncaudit64 F6:
 * "covers 20 events" beside 21 archived, nothing saying which one or why). Null when there is none.
 * @param {Schemas['CompactionHistoryItem']} item @param {ReadonlyMap<string, LogEntry>} events the page's log entries by event id
 * @returns {HTMLElement | null}
 */
function notSummarized(item, events) {
  const covered = new Set(item.summary?.coveredIds ?? []);
  const others = supersededOf(item, events).filter((id) => !covered.has(id));
  if (others.length === 0) return null;
  return h(
    'div',
    { class: 'muted', id: 'not-summarized' },
    `also archived, not summarized (a system message a newer one replaced): `,
    ...others.flatMap((id, i) => (i === 0 ? [stored(id)] : [', ', stored(id)])),
  );
}

/**
 * What a summary covers, for its label in a compaction's details: `covers 12 events`, and when it
 * replaces an earlier summary (one of its `coveredIds`, archived by the pass), `covers 12 events and
 * the summary it replaces`, as the summary's own text counts them (newcomer ncaudit72 F5: `covers 13
 * events` above `… of 12 earlier events`). A covered id is a summary by the diff's Before (its type)
 * or the pass's `archivedBecause` (`replacedSummaries`).
 * @param {ReadonlyArray<string>} coveredIds @param {CompactionDiff} diff @param {ReadonlyMap<string, ArchiveReason>} reasons ({@link archiveReasons})
 * @returns {string}
 */
function coversText(coveredIds, diff, reasons) {
  const summaries = new Set(diff.before.events.filter((e) => e.type === 'summary').map((e) => e.id));
  const replaced = coveredIds.filter((id) => summaries.has(id) || reasons.get(id) === 'replacedSummaries').length;
  const events = `covers ${counted(coveredIds.length - replaced, 'event')}`;
  if (replaced === 0) return events;
  return `${events} and ${replaced === 1 ? 'the summary' : `the ${fmt(replaced)} summaries`} it replaces`;
}

/**
 * A compaction's "saved" in its details: `1,254 cl100k_base`, and when it archived superseded
 * system messages ({@link supersededOf}), how much of it they are (DESIGN §3.6 counts them: the
 * model was not sent them before the pass either): `1,254 cl100k_base, of which 1,254 for a
 * superseded system message …` (newcomer ncui69 F1, F3). Their tokens are the Before column's. A pass that made the
 * window larger saved 0 and says by how much it grew: `0 cl100k_base (the window grew by 15: …)`.
 * @param {CompactionItem} item @param {CompactionDiff} diff @param {ReadonlyArray<string>} superseded
 */
function savedText(item, diff, superseded) {
  // savings are never negative (DESIGN §3.6): a pass whose summary cost more than it archived says the window grew (newcomer ncaudit72 F4)
  const grew =
    item.tokensAfter > item.tokensBefore
      ? ` (the window grew by ${fmt(item.tokensAfter - item.tokensBefore)}: the summary costs more than what it archived)`
      : '';
  const text = `${fmt(item.tokensSaved)} ${diff.estimator}${grew}`;
  if (superseded.length === 0) return text;
  const ids = new Set(superseded);
  const tokens = diff.before.events.reduce((sum, e) => sum + (ids.has(e.id) && e.change === 'archived' ? e.tokens : 0), 0);
  const what = `${superseded.length === 1 ? 'a superseded system message' : `${fmt(superseded.length)} superseded system messages`} the model was no longer sent (a newer one replaced ${superseded.length === 1 ? 'it' : 'them'}; not sent in the OpenAI rendering)`;
  return tokens <= item.tokensSaved ? `${text}, of which ${fmt(tokens)} for ${what}` : `${text}; the archived events include ${fmt(tokens)} for ${what}`;
}

/**
 * A stored policy in one line, as the session's facts write it: `sliding-window (maxEvents 4) when
 * turn-count (maxTurns 1), counted in chars` (`always` without a trigger; prompts left out, see {@link brief}).
 * @param {{ strategy: Record<string, unknown> & { type: string }, trigger?: (Record<string, unknown> & { type: string }) | null, estimator?: string }} policy
 * @returns {string}
 */
function policyText(policy) {
  const when = policy.trigger ? brief(policy.trigger) : 'always';
  return `${brief(policy.strategy)} when ${when}${policy.estimator ? `, counted in ${policy.estimator}` : ''}${promptsText(policy.strategy)}`;
}

/**
 * A policy whole, for a tooltip: its strategy (prompts whole), trigger and estimator as stored, as JSON, hidden characters revealed.
 * @param {{ strategy: unknown, trigger?: unknown, estimator?: unknown }} policy
 * @returns {string}
 */
function policyTitle(policy) {
  return revealedText(JSON.stringify({ strategy: policy.strategy, trigger: policy.trigger ?? null, estimator: policy.estimator }, null, 1));
}

/** Longest part of a prompt {@link policyText} writes, in UTF-16 code units (the whole one is in the row's tooltip). */
const PROMPT_EXCERPT = 40;

/**
 * A summarizing strategy's prompts in a policy's line, each as its first {@link PROMPT_EXCERPT}
 * units quoted (`; systemPrompt "Keep every id."`), so that versions differing only in their prompts
 * read apart (newcomer ncrecheck64 F2); empty for a strategy without them.
 * @param {Record<string, unknown>} strategy
 * @returns {string}
 */
function promptsText(strategy) {
  return ['systemPrompt', 'shadowPrompt']
    .filter((key) => typeof strategy[key] === 'string')
    .map((key) => {
      const [shown, cut] = clip(/** @type {string} */ (strategy[key]), PROMPT_EXCERPT);
      return `; ${key} "${revealedText(shown)}${cut ? '…' : ''}"`;
    })
    .join('');
}

/** An ISO-8601 date-time's zone at its end: `Z` or an offset such as `+05:30`. */
const ZONE = /(?:Z|[+-]\d\d(?::?\d\d)?)$/i;

/**
 * The one way the page writes a time: an ISO-8601 date-time of the service's data (`Z` or an
 * offset) as its instant in UTC, to the millisecond, the zone named: `2026-03-08 07:30:00.000 UTC`
 * for `2026-03-08T03:30:00-04:00`, whatever the browser's time zone (finer digits are cut, as
 * `Date` cuts them: the full value is in {@link timeOf}'s tooltip). `undefined` for text that is
 * not such a date-time (no zone, or one `Date` cannot read).
 * @param {string} iso
 * @returns {string | undefined}
 */
function utcText(iso) {
  const ms = ZONE.test(iso) ? Date.parse(iso) : NaN;
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString().replace('T', ' ').replace('Z', ' UTC');
}

/**
 * A time of the service's data on the page: `<time datetime="2026-03-08T07:30:00.000Z"
 * title="<label>: <iso as answered>">2026-03-08 07:30:00.000 UTC</time>` ({@link utcText}), the
 * tooltip keeping the full value as the API gave it. Text that is not a date-time with a zone is
 * shown as stored text, as given, marked "(not a date-time with a zone)".
 * @param {string} iso an ISO-8601 date-time from the API
 * @param {string} label what the time is, for the tooltip (e.g. "recorded", "last activity")
 * @param {string} [cls] a class for the element
 * @returns {HTMLElement}
 */
function timeOf(iso, label, cls) {
  const text = utcText(iso);
  const title = `${label}: ${revealedText(iso)}`;
  if (text === undefined) return h('span', { class: cls, title }, stored(iso), ' (not a date-time with a zone)');
  return h('time', { class: cls, datetime: new Date(Date.parse(iso)).toISOString(), title }, text);
}
/**
 * What a compaction's time is on the page (its list, its details, its timeline marker): when the
 * store recorded its decision (the history item's `recordedAt`, the clock "Go to time" goes by, so
 * that time goes to the window right after it), named so in its tooltip (`RECORDED_LABEL`) and
 * in its heading's (`RECORDED_TITLE`).
 */
const RECORDED_LABEL = 'decision recorded (store time, recordedAt)';
const RECORDED_TITLE =
  'When the store recorded the decision (recordedAt): the clock of the timeline and of "Go to time", which goes to the window right after the compaction at this time';
/**
 * A compaction's time on the page ({@link timeOf}): its `recordedAt` (store time, see
 * `RECORDED_LABEL`); from a replica of a release before 2026-12-05, whose history items have no
 * `recordedAt` (a rolling upgrade behind a load balancer), its `at`, named as the deciding replica's
 * clock, so the page still opens.
 * @param {{ recordedAt?: string, at: string }} item a compaction history item
 * @returns {HTMLElement}
 */
const compactionTime = (item) =>
  typeof item.recordedAt === 'string'
    ? timeOf(item.recordedAt, RECORDED_LABEL)
    : timeOf(item.at, "compaction at (the deciding replica's clock: this replica's release gives no store time)");
/** @param {number} n */
const fmt = (n) => n.toLocaleString('en-US');
/** @param {string} id */
const short = (id) => (id.length > 14 ? `${id.slice(0, 8)}…` : id);
/** @param {string} sessionId */
const sessionHref = (sessionId) => `#/s/${encodeURIComponent(sessionId)}`;

// ---- key prompt -------------------------------------------------------------------------------

/** `text` as the start of a sentence: its first letter capitalized (`the service refused this API key` → `The service …`). @param {string} text */
const sentence = (text) => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * Shows the key prompt instead of the page: nothing of the tenant stays (the document title names
 * the prompt, the announcer is emptied), and a key the service refused leaves sessionStorage (a
 * new tab would send it again). "Forget API key" is hidden: there is no key left to forget.
 * @param {string} reason why a key is needed, as a phrase (`this service needs an API key`): shown as a sentence, capitalized
 */
function showKeyPrompt(reason) {
  sessionStorage.removeItem(KEY_STORAGE);
  clearAnnouncement();
  document.title = `API key needed – ${APP_TITLE}`;
  /** @type {HTMLElement} */ (document.getElementById('forget-key')).hidden = true;
  showKeyInUse();
  const input = /** @type {HTMLInputElement} */ (h('input', { type: 'password', name: 'apiKey', placeholder: 'API key', autocomplete: 'off', required: true }));
  showPage(
    false,
    undefined,
    h(
      'section',
      { class: 'panel prompt', id: 'key-prompt' },
      h('h1', {}, 'API key needed'),
      h('p', {}, `${sentence(reason)}. Enter one of the service's API keys: it is kept in this tab only (sessionStorage) and sent as a Bearer token.`),
      h(
        'form',
        {
          class: 'inline',
          onsubmit: (e) => {
            e.preventDefault();
            sessionStorage.setItem(KEY_STORAGE, input.value.trim());
            render();
          },
        },
        input,
        h('button', { class: 'primary', type: 'submit' }, 'Use key'),
      ),
    ),
  );
}

// ---- session list -----------------------------------------------------------------------------

/**
 * The line beside the session list's filter: how many sessions are loaded (the API answers pages
 * with a cursor, not a total), how many of them match the search text when there is one, and
 * whether more are there to load ("Load more"): `100 loaded, more available`, `3 of 100 loaded
 * match, more available`, `2,400 loaded, all listed` (numbers as the page writes them).
 * @param {number} shown sessions matching the search text
 * @param {number} loaded sessions loaded so far
 * @param {boolean} searching whether a search text filters the loaded sessions
 * @param {boolean} more whether the last page read has a next one
 */
function sessionCountText(shown, loaded, searching, more) {
  return `${searching ? `${fmt(shown)} of ${fmt(loaded)} loaded match` : `${fmt(loaded)} loaded`}, ${more ? 'more available' : 'all listed'}`;
}

/**
 * The sessions of the list `query` (its filters) whose last activity is at or after `since` (an
 * ISO time from the API), every page of them: the sessions written while the list was paged, which
 * moved to its front past the pages already read (docs/http-api.md: "read again with `updatedSince` to catch
 * it"), so that "all listed" holds (newcomer ncaudit64 F1: 164 listed of 165, said "all listed").
 * @param {URLSearchParams} query
 * @param {string} since
 * @returns {Promise<SessionSummary[]>}
 */
async function readSince(query, since) {
  const found = [];
  /** @type {string | undefined} */
  let after;
  do {
    const asked = new URLSearchParams(query);
    asked.set('updatedSince', since);
    if (after) asked.set('cursor', after);
    /** @type {Schemas['SessionList']} */
    const page = await api(`/v1/sessions?${asked}`);
    found.push(...page.sessions);
    after = page.nextCursor;
  } while (after);
  return found;
}

/**
 * `listed` with each of `moved` (newest first, as the API lists them) first in its place: a session
 * listed already whose `lastPosition` moved on is taken from where it was, one at the same position
 * stays where it is, a session not listed yet comes first.
 * @param {SessionSummary[]} listed
 * @param {SessionSummary[]} moved
 * @returns {SessionSummary[]}
 */
function withMovedFirst(listed, moved) {
  const at = new Map(listed.map((s) => [s.sessionId, s.lastPosition]));
  const front = moved.filter((s) => at.get(s.sessionId) !== s.lastPosition);
  if (front.length === 0) return listed;
  const taken = new Set(front.map((s) => s.sessionId));
  return [...front, ...listed.filter((s) => !taken.has(s.sessionId))];
}

/** How long typing in the session list's search text pauses before its count is announced, in milliseconds. */
const COUNT_QUIET_MS = 600;

/** The estimator of the list's "Window tokens" column (sent with every list read, so the column has one unit). */
const LIST_ESTIMATOR = 'cl100k_base';

/** Said before the session list's count after Filter read it again because its user id changed. */
const REFILTERED = 'the user id filter changed; the list was read again from its first page: ';

/**
 * The session list. Its first page is read before anything on screen is replaced: when that read
 * fails, the page stays as it was and the error goes to the caller.
 *
 * Its two filters differ: "session id contains" filters the sessions loaded, on the page, as it is
 * typed; the user id is the API's (`userId`), so a list of another user id is read from its first
 * page. Filter (or Enter) reads the list again only when the user id differs from the one of the
 * list on screen, the count then saying so ({@link REFILTERED}); else it reads nothing and says the
 * count again: a read from the first page dropped the sessions loaded with "Load more", and the
 * matches among them (newcomer ncaudit72 F2: `10 of 123 loaded match` became `0 of 100`).
 *
 * One read at a time counts: "Load more" is disabled and ignored while a page is being read, and
 * a filter (a fresh first page) drops the answer of any read started before it, so a page read
 * without the filter never joins the filtered list. A session already listed is not listed (or
 * counted) again.
 * @param {() => boolean} isCurrent false once another route was asked for (its answer is dropped)
 */
async function renderSessionList(isCurrent) {
  /** @type {SessionSummary[]} */
  let sessions = [];
  /** @type {string | undefined} */
  let cursor;
  /** Reads started so far with a fresh first page: an answer of an older one is dropped. */
  let generation = 0;
  /** Whether a page is being read (a "Load more" click is then ignored). */
  let reading = false;
  /**
   * Said before the count while the list on screen is a paging started again ({@link pageOrRestart}),
   * or was read again for another user id ({@link REFILTERED}); else empty.
   */
  let restartedNote = '';
  /** The query (filters) of the list on screen, which "Load more" pages on; undefined before its first page. @type {URLSearchParams | undefined} */
  let pagedQuery;
  /** The newest `lastActivityAt` listed (the first session's): sessions written since are read again at the last page ({@link readSince}). */
  /** @type {string | undefined} */
  let newestActivity;
  const params = new URLSearchParams(location.hash.split('?')[1] ?? '');
  const search = /** @type {HTMLInputElement} */ (
    h('input', { type: 'search', name: 'search', placeholder: 'session id contains…', 'aria-label': 'Session id contains', value: params.get('q') ?? '' })
  );
  const user = /** @type {HTMLInputElement} */ (
    h('input', { type: 'text', name: 'userId', placeholder: 'user id (exact)', 'aria-label': 'User id (exact)', value: params.get('user') ?? '' })
  );
  const body = h('tbody');
  const more = /** @type {HTMLButtonElement} */ (h('button', { type: 'button', id: 'more', hidden: true, onclick: () => loadInPlace(false) }, 'Load more'));
  // A live region: the count is announced after Filter and "Load more", and after typing in the
  // search text once typing pauses ({@link quietCount}), not on every keystroke.
  const count = h('span', { class: 'muted', id: 'session-count', role: 'status', 'aria-atomic': 'true' });
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let typing;
  /**
   * Redraws the list as the search text is typed: the table at once, the count too but silenced
   * (`aria-live="off"`) until {@link COUNT_QUIET_MS} pass without a keystroke, then announced once.
   */
  const quietCount = () => {
    count.setAttribute('aria-live', 'off');
    draw();
    clearTimeout(typing);
    typing = setTimeout(() => {
      count.removeAttribute('aria-live');
      count.textContent = String(count.textContent);
    }, COUNT_QUIET_MS);
  };

  /** The number of rows the table showed before the latest draw (the first new row after "Load more"). */
  let rowsBefore = 0;
  const draw = () => {
    const q = search.value.trim().toLowerCase();
    const shown = sessions.filter((s) => s.sessionId.toLowerCase().includes(q));
    rowsBefore = body.children.length;
    // The API gives pages, not a total: the count says what is loaded, and whether more are there to load.
    count.textContent = restartedNote + sessionCountText(shown.length, sessions.length, q !== '', cursor !== undefined);
    fill(
      body,
      shown.map((s) =>
        h(
          'tr',
          { class: 'clickable', 'data-session': s.sessionId, onclick: () => (location.hash = sessionHref(s.sessionId)) },
          h('td', {}, h('a', { href: sessionHref(s.sessionId) }, stored(s.sessionId))),
          h('td', {}, s.userId === undefined ? '—' : stored(s.userId)),
          h('td', { class: 'num' }, fmt(s.eventCount)),
          h('td', { class: 'num' }, fmt(s.windowTokens)),
          h(
            'td',
            { class: 'num' },
            // The session page's words: `3 compacted, 1 failed` (it read `3` and a `1 failed` badge: "3, of which 1 failed"?).
            listCompactionCounts(s),
            s.triggerStillFires ? h('span', { class: 'badge archived', title: stillFiresTitle }, 'trigger still fires') : null,
          ),
          h('td', {}, s.policy ? s.policy.strategy.type : '—'),
          h('td', {}, timeOf(s.lastActivityAt, 'last activity')),
        ),
      ),
    );
  };
  /**
   * Reads one page (the first when `fresh`) and shows the list with it; on failure nothing changes.
   * Answers `false` without reading for "Load more" while a page is being read, and drops (answers
   * `false` for) an answer that a newer filter or another route made stale; throws the read's error
   * only while it is not stale.
   * @param {boolean} fresh
   * @param {boolean} [refiltered] read for Filter because the user id changed (the count says so)
   * @returns {Promise<boolean>} whether the list now shows this read's page
   */
  const load = async (fresh, refiltered = false) => {
    if (!fresh && reading) return false;
    const turn = fresh ? ++generation : generation;
    const stale = () => turn !== generation || !isCurrent();
    // Whether the keyboard is on "Load more": it stays there, or goes to the first new row when the
    // button hides (nothing more to load). The button is marked aria-disabled, not disabled, while
    // the page is read: a disabled button loses focus (to <body>).
    const onButton = !fresh && document.activeElement === more;
    reading = true;
    more.setAttribute('aria-disabled', 'true');
    more.textContent = 'Loading…';
    if (fresh) showLoading('Reading the session list…');
    // "Load more" goes on with the filters of the list on screen, not a user id typed since (its cursor is that list's).
    const query = fresh || pagedQuery === undefined ? new URLSearchParams({ limit: '100', estimator: LIST_ESTIMATOR }) : pagedQuery;
    if ((fresh || pagedQuery === undefined) && user.value.trim()) query.set('userId', user.value.trim());
    /** @param {string | undefined} after @returns {Promise<Schemas['SessionList']>} */
    const read = (after) => api(`/v1/sessions?${query}${after ? `&cursor=${encodeURIComponent(after)}` : ''}`);
    try {
      // "Load more" refused as another release's cursor (an upgrade between the pages): the first page again.
      const { page, restarted } = await pageOrRestart(read, fresh ? undefined : cursor);
      // The last page of several: the sessions written while they were read moved to the list's front, before the pages read.
      const movedMeanwhile = !fresh && !restarted && !page.nextCursor && newestActivity ? await readSince(query, newestActivity) : [];
      if (stale()) return false;
      if (fresh || restarted) sessions = [];
      pagedQuery = query;
      restartedNote = restarted ? `${RESTARTED}; the list was read again from its first page: ` : refiltered ? REFILTERED : '';
      const listed = new Set(sessions.map((s) => s.sessionId));
      const listedBefore = new Set(listed);
      for (const s of page.sessions) {
        // A session with new activity since the first page comes again on a later one: listed once.
        if (listed.has(s.sessionId)) continue;
        listed.add(s.sessionId);
        sessions.push(s);
      }
      sessions = withMovedFirst(sessions, movedMeanwhile);
      newestActivity = sessions[0]?.lastActivityAt;
      cursor = page.nextCursor;
      more.hidden = !cursor;
      draw();
      // the first row this read listed (sessions written meanwhile come first, before rows already listed; newcomer ncrecheck64 F3)
      const firstNew = [...body.children].find((row) => !listedBefore.has(row.getAttribute('data-session') ?? ''));
      if (onButton && more.hidden) focusOn(/** @type {HTMLElement | null} */ ((restarted ? body.children[0] : firstNew) ?? count));
      return true;
    } catch (err) {
      if (stale()) return false;
      throw err;
    } finally {
      if (turn === generation) {
        reading = false;
        more.removeAttribute('aria-disabled');
        more.textContent = 'Load more';
        if (fresh && isCurrent()) clearLoading();
      }
    }
  };
  /** @param {boolean} fresh @param {boolean} [refiltered] */
  const loadInPlace = (fresh, refiltered = false) =>
    load(fresh, refiltered).then(
      (shown) => (shown ? clearBanner() : undefined),
      (err) => failInPlace(fresh ? 'The session list could not be read' : 'More sessions could not be read', err, () => loadInPlace(fresh, refiltered)),
    );
  /**
   * Filter (or Enter): the list read again from its first page only when the user id (the API's
   * filter) differs from the list on screen's; else the loaded sessions stay, and the count is said
   * now, not once typing pauses.
   */
  const filter = () => {
    if (user.value.trim() !== (pagedQuery?.get('userId') ?? '')) return void loadInPlace(true, true);
    clearTimeout(typing);
    count.removeAttribute('aria-live');
    draw();
  };
  search.addEventListener('input', quietCount);
  await load(true);
  if (!isCurrent()) return;
  showPage(
    true,
    undefined,
    h(
      'section',
      { class: 'panel' },
      h('h1', { id: 'list-title' }, 'Sessions'),
      h(
        'form',
        {
          class: 'inline',
          onsubmit: (e) => {
            e.preventDefault();
            filter();
          },
        },
        search,
        user,
        h('button', { type: 'submit' }, 'Filter'),
        count,
      ),
      h(
        'table',
        { id: 'sessions' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', {}, 'Session'),
            h('th', {}, 'User'),
            h('th', { class: 'num' }, 'Conversation events'),
            h('th', { class: 'num' }, `Window tokens (${LIST_ESTIMATOR})`),
            h('th', { class: 'num' }, 'Compactions'),
            h('th', {}, 'Policy'),
            h('th', {}, 'Last activity'),
          ),
        ),
        body,
      ),
      more,
    ),
    recallBox(),
  );
  document.title = `Sessions – ${APP_TITLE}`;
  if (routed) focusOn(/** @type {HTMLElement | null} */ (main.querySelector('#list-title')), true);
}

// ---- erasures ----------------------------------------------------------------------------------

/**
 * The erasures view (`#/erasures`): the tenant's erasures, newest first (`GET /v1/erasures`), in
 * pages of 100 with "Load more": each erased session life's id, when it was erased, how many events
 * went, which revisions and who ordered it ({@link requestedByParts}); no content is kept of them. Its first page is read before anything on
 * screen is replaced (a failure goes to the caller); "Load more" is ignored while a page is read,
 * and a page refused as another release's cursor starts the list again from its first page and
 * says so ({@link pageOrRestart}).
 * @param {() => boolean} isCurrent false once another route was asked for (its answer is dropped)
 */
async function renderErasures(isCurrent) {
  /** @type {Schemas['Erasure'][]} */
  let erasures = [];
  /** @type {string | undefined} */
  let cursor;
  let reading = false;
  const body = h('tbody');
  const count = h('span', { class: 'muted', id: 'erasure-count', role: 'status', 'aria-atomic': 'true' });
  const more = /** @type {HTMLButtonElement} */ (h('button', { type: 'button', id: 'erasures-more', hidden: true, onclick: () => loadInPlace() }, 'Load more'));
  /** @param {Schemas['Erasure']} e */
  const row = (e) =>
    h(
      'tr',
      { 'data-session': e.sessionId, 'data-position': e.position },
      h('td', {}, h('a', { href: sessionHref(e.sessionId) }, stored(e.sessionId))),
      h('td', {}, timeOf(e.erasedAt, 'erased at')),
      h('td', { class: 'num' }, fmt(e.erasedEvents)),
      h(
        'td',
        {},
        e.lastRevision === null
          ? h('span', { class: 'muted', title: 'an erasure recorded before records named their revisions' }, 'not recorded')
          : `${e.firstRevision ?? '?'}–${e.lastRevision}`,
      ),
      h(
        'td',
        { class: 'requested-by' },
        e.requestedBy
          ? requestedByParts(e.requestedBy)
          : h('span', { class: 'muted', title: 'an erasure recorded before records kept who ordered it' }, 'not recorded'),
      ),
      h('td', { class: 'num' }, e.position),
    );
  /**
   * Reads the next page (the first when `fresh`) and shows the list with it; on failure nothing changes.
   * @param {boolean} fresh
   */
  const load = async (fresh) => {
    if (!fresh && reading) return;
    const onButton = !fresh && document.activeElement === more;
    const rowsBefore = body.children.length;
    reading = true;
    more.setAttribute('aria-disabled', 'true');
    /** @param {string | undefined} after @returns {Promise<Schemas['ErasureList']>} */
    const read = (after) => api(`/v1/erasures?limit=100${after ? `&cursor=${encodeURIComponent(after)}` : ''}`);
    try {
      const { page, restarted } = await pageOrRestart(read, fresh ? undefined : cursor);
      if (!isCurrent()) return;
      if (fresh || restarted) erasures = [];
      // Records are never removed and the pages go by position: nothing comes twice, but a restart's rows replace those shown.
      erasures.push(...page.erasures);
      cursor = page.nextCursor;
      more.hidden = !cursor;
      fill(body, erasures.map(row));
      const listed =
        erasures.length === 0 ? 'no session was erased' : `${counted(erasures.length, 'erasure')} loaded, ${cursor ? 'more available' : 'all listed'}`;
      count.textContent = (restarted ? `${RESTARTED}; the list was read again from its first page: ` : '') + listed;
      if (onButton && more.hidden) focusOn(/** @type {HTMLElement | null} */ (body.children[restarted ? 0 : rowsBefore] ?? count));
    } finally {
      reading = false;
      more.removeAttribute('aria-disabled');
    }
  };
  const loadInPlace = () =>
    load(false).then(
      () => clearBanner(),
      (err) => isCurrent() && failInPlace('More erasures could not be read', err, () => loadInPlace()),
    );
  await load(true);
  if (!isCurrent()) return;
  showPage(
    true,
    undefined,
    h(
      'section',
      { class: 'panel' },
      h('h1', { id: 'erasures-title' }, 'Erasures'),
      h(
        'p',
        { class: 'muted' },
        'Each erased session life: its id, when it was erased, how many events of its stream went (the conversation events and its compaction and policy events: more than the event count of the session page once it was compacted), which revisions and who ordered it (the transport, the API key by its label, never the key, and the request or command id). The content is gone from the store and every read model; only this record of the erasure is kept. A session id written again after its erasure continues after the erased revisions. ',
        count,
      ),
      h(
        'table',
        { id: 'erasures' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', {}, 'Session'),
            h('th', {}, 'Erased at'),
            h('th', { class: 'num' }, 'Events erased'),
            h('th', {}, 'Revisions'),
            h('th', {}, 'Ordered by'),
            h('th', { class: 'num' }, 'Record position'),
          ),
        ),
        body,
      ),
      more,
    ),
  );
  document.title = `Erasures – ${APP_TITLE}`;
  if (routed) focusOn(/** @type {HTMLElement | null} */ (main.querySelector('#erasures-title')), true);
}

/**
 * The page of a session id that was erased (its summary answered 404 `session_not_found` with
 * `erasedAt`): says when, instead of a bare "not found", with a link to the erasures view.
 * @param {string} sessionId @param {string} erasedAt
 */
function showErased(sessionId, erasedAt) {
  showPage(
    false,
    undefined,
    h('p', {}, h('a', { href: '#/' }, '← all sessions')),
    h(
      'section',
      { class: 'panel', id: 'session-erased' },
      stored(sessionId, 'h1', { id: 'session-title' }),
      h(
        'p',
        {},
        'This session was erased at ',
        timeOf(erasedAt, 'erased at'),
        ': its content left the store and every read model, and it has not been written since. What is kept of the erasure (when, how many events, which revisions, who ordered it) is listed under ',
        h('a', { href: '#/erasures' }, 'Erasures'),
        '.',
      ),
    ),
  );
  document.title = `Session ${revealedText(sessionId)} (erased) – ${APP_TITLE}`;
  if (routed) focusOn(/** @type {HTMLElement | null} */ (main.querySelector('#session-title')), true);
}

// ---- session page -----------------------------------------------------------------------------

/** Thrown by a read that another route made stale (its answer is dropped; nobody shows it). */
class Superseded extends Error {}

/**
 * What the session page shows, read as one consistent state: the session's summary first, then
 * its log and compaction history up to the summary's revision (`asOf`), so every figure on the
 * page describes the same revision however many events are appended meanwhile. Neither the log
 * nor the history route takes an upper bound: both are read with `minPosition` = the summary's
 * `lastPosition` (they include everything it counts) and cut at `asOf` here: log entries and
 * compactions after it, and late answers archived on arrival after it, are left out; an event
 * archived after `asOf` shows as in the window (`archived` false), as it was at `asOf`.
 * `historyRestarted`: the compaction history was read again from its first page ({@link readCompactions}).
 * `erased`: for a session id written again after an erasure (its log starts past revision 0), its
 * erased earlier lives ({@link readErasedLives}); undefined otherwise.
 * @typedef {{
 *   summary: SessionSummary,
 *   asOf: bigint,
 *   log: LogEntry[],
 *   compactions: CompactionItem[],
 *   historyRestarted: boolean,
 *   erased: ErasedLives | undefined,
 * }} SessionState
 */

/**
 * The erased earlier lives of a session id written again: `firstRevision`, where its log starts
 * now (revisions 0 to `firstRevision` − 1 were erased); `erasures`, the erasure records of this id
 * found before it, oldest first; `complete`, whether they were all found (else the search stopped,
 * see {@link readErasedLives}); `error`, why they could not be read (then `erasures` is empty).
 * @typedef {{ firstRevision: bigint, erasures: Schemas['Erasure'][], complete: boolean, error?: string }} ErasedLives
 */

/**
 * Reads {@link SessionState}. `progress(entries)` is called after each log page with the number of
 * log entries read so far. Throws {@link Superseded} once `isCurrent()` is false (it stops reading),
 * and what {@link api} throws.
 * @param {string} sessionId
 * @param {() => boolean} isCurrent
 * @param {(entries: number, summary: SessionSummary) => void} progress
 * @returns {Promise<SessionState>}
 */
async function readSession(sessionId, isCurrent, progress) {
  const path = `/v1/sessions/${encodeURIComponent(sessionId)}`;
  /** @type {SessionSummary} */
  const summary = await api(path);
  if (!isCurrent()) throw new Superseded();
  const asOf = BigInt(summary.revision);
  progress(0, summary);
  const [log, history] = await Promise.all([
    readLog(path, asOf, summary.lastPosition, isCurrent, (n) => progress(n, summary)),
    readCompactions(path, asOf, summary.lastPosition, isCurrent),
  ]);
  // A session id written again after an erasure starts after the erased revisions.
  const first = log[0] === undefined ? 0n : BigInt(log[0].revision);
  const erased = first > 0n ? await readErasedLives(sessionId, first, isCurrent) : undefined;
  return { summary, asOf, log: asOfRevision(log), compactions: history.compactions, historyRestarted: history.restarted, erased };
}

/** Pages of the tenant's erasures {@link readErasedLives} reads at most (of 100 each). */
const ERASURE_PAGES = 20;

/**
 * The erased earlier lives of `sessionId`, whose log starts at `firstRevision` (> 0), from the
 * tenant's erasures (`GET /v1/erasures`, newest first, pages of 100): this id's records of lives
 * before `firstRevision`, oldest first. It reads until it finds the first life's (revision 0), the
 * list ends, or {@link ERASURE_PAGES} pages were read (`complete` false unless the first life's was
 * found); a cursor refused as another release's reads the list again from its first page
 * ({@link pageOrRestart}). A failed read is not the page's failure: `error` says why (e.g. 404
 * `route_not_found` from a replica of a release before the route). Throws {@link Superseded} once
 * `isCurrent()` is false, and {@link NeedsKey}.
 * @param {string} sessionId @param {bigint} firstRevision @param {() => boolean} isCurrent
 * @returns {Promise<ErasedLives>}
 */
async function readErasedLives(sessionId, firstRevision, isCurrent) {
  /** @type {Schemas['Erasure'][]} */
  let found = [];
  /** @type {string | undefined} */
  let cursor;
  /** @param {string | undefined} after @returns {Promise<Schemas['ErasureList']>} */
  const read = (after) => api(`/v1/erasures?limit=100${after ? `&cursor=${encodeURIComponent(after)}` : ''}`);
  try {
    for (let pages = 0; pages < ERASURE_PAGES; pages++) {
      const { page, restarted } = await pageOrRestart(read, cursor);
      if (!isCurrent()) throw new Superseded();
      if (restarted) found = [];
      for (const e of page.erasures) {
        // An erasure of a life after the one this page shows (written since) is not one of its earlier lives.
        if (e.sessionId !== sessionId || (e.lastRevision !== null && BigInt(e.lastRevision) >= firstRevision)) continue;
        found.push(e);
        if (e.firstRevision === '0') return { firstRevision, erasures: found.reverse(), complete: true };
      }
      cursor = page.nextCursor;
      if (!cursor) break;
    }
    return { firstRevision, erasures: found.reverse(), complete: false };
  } catch (err) {
    if (err instanceof Superseded || err instanceof NeedsKey) throw err;
    return { firstRevision, erasures: [], complete: false, error: problem(err).message };
  }
}

/**
 * The note of a session id written again after an erasure (`#erased-lives`, in its facts): which
 * revisions were erased and when, each erased life from the erasures the API lists: `Written again
 * after an erasure: revisions 0–63 erased on 2026-12-04 09:00:00.000 UTC (64 events). This page
 * shows revisions 64 on; see Erasures.` A record written before records named their revisions
 * says `an earlier life erased on … (12 events; its revisions not recorded)`; lives not found, or
 * a failed read, say that revisions 0–63 were erased and why no more is known.
 * @param {ErasedLives} erased
 * @returns {HTMLElement}
 */
function erasedLivesNote(erased) {
  const before = `revisions 0–${erased.firstRevision - 1n}`;
  /** @type {Array<Node | string>} */
  const lives = [];
  erased.erasures.forEach((e, i) => {
    if (i > 0) lives.push('; ');
    const events = counted(e.erasedEvents, 'event');
    if (e.lastRevision === null) lives.push('an earlier life erased on ', timeOf(e.erasedAt, 'erased at'), ` (${events}; its revisions not recorded)`);
    else lives.push(`revisions ${e.firstRevision ?? '?'}–${e.lastRevision} erased on `, timeOf(e.erasedAt, 'erased at'), ` (${events})`);
  });
  /** @type {Array<Node | string>} */
  let said;
  if (erased.error !== undefined) said = [`${before} were erased (when could not be read: `, stored(erased.error), ')'];
  else if (lives.length === 0) said = [`${before} were erased (their erasure records were not found in the latest ${fmt(ERASURE_PAGES * 100)} erasures)`];
  else if (!erased.complete) said = [...lives, `; of ${before}, earlier erasures were not found in the latest ${fmt(ERASURE_PAGES * 100)}`];
  else said = lives;
  return h(
    'p',
    { id: 'erased-lives', class: 'muted' },
    'Written again after an erasure: ',
    said,
    `. This page shows revisions ${erased.firstRevision} on; see `,
    h('a', { href: '#/erasures' }, 'Erasures'),
    '.',
  );
}

/**
 * The log's entries up to revision `asOf` (inclusive), in pages of 1,000; it stops at the first
 * entry past `asOf`.
 * @param {string} path the session's route
 * @param {bigint} asOf
 * @param {string} minPosition
 * @param {() => boolean} isCurrent
 * @param {(entries: number) => void} progress
 * @returns {Promise<LogEntry[]>}
 */
async function readLog(path, asOf, minPosition, isCurrent, progress) {
  /** @type {LogEntry[]} */
  const all = [];
  let from = '0';
  for (;;) {
    /** @type {Schemas['LogPage']} */
    const page = await api(`${path}/events?fromRevision=${from}&limit=1000&minPosition=${minPosition}`);
    if (!isCurrent()) throw new Superseded();
    for (const entry of page.events) {
      if (BigInt(entry.revision) > asOf) return all;
      all.push(entry);
    }
    progress(all.length);
    if (page.nextRevision === undefined || BigInt(page.nextRevision) > asOf) return all;
    from = page.nextRevision;
  }
}

/**
 * The compaction history up to revision `asOf` (decisions whose last event is at or before it),
 * each without the late answers archived on arrival after `asOf`, and whether it was read again
 * from its first page because the service refused a next page's cursor as another release's
 * (`restarted`, {@link pageOrRestart}; the pages read before are dropped, so no decision is listed twice).
 * @param {string} path the session's route
 * @param {bigint} asOf
 * @param {string} minPosition
 * @param {() => boolean} isCurrent
 * @returns {Promise<{ compactions: CompactionItem[], restarted: boolean }>}
 */
async function readCompactions(path, asOf, minPosition, isCurrent) {
  /** @type {CompactionItem[]} */
  const all = [];
  /** @type {string | undefined} */
  let cursor;
  let restarted = false;
  /** @param {string | undefined} after @returns {Promise<Schemas['CompactionHistoryPage']>} */
  const read = (after) => api(`${path}/compactions?limit=100&minPosition=${minPosition}${after ? `&cursor=${encodeURIComponent(after)}` : ''}`);
  do {
    // A next page refused as another release's cursor (an upgrade between the pages): the history again from its first page.
    const answer = await pageOrRestart(read, cursor);
    if (!isCurrent()) throw new Superseded();
    const page = answer.page;
    if (answer.restarted) {
      all.length = 0;
      restarted = true;
    }
    for (const c of page.compactions) {
      if (BigInt(c.revision) > asOf) continue;
      const onArrival = c.archivedOnArrival.filter((a) => BigInt(a.revision) <= asOf);
      all.push(onArrival.length === c.archivedOnArrival.length ? c : { ...c, archivedOnArrival: onArrival });
    }
    cursor = page.nextCursor;
  } while (cursor);
  return { compactions: all, restarted };
}

/**
 * `log` (entries up to one revision) with each entry's `archived` and `archivedBy` as of that
 * revision: an entry the API marks archived by an `EventsArchived` past the revision (not in
 * `log`) is shown in the window.
 * @param {LogEntry[]} log
 * @returns {LogEntry[]}
 */
function asOfRevision(log) {
  /** @type {Set<string>} */
  const archived = new Set();
  for (const entry of log) {
    if (entry.type !== 'EventsArchived') continue;
    for (const id of /** @type {any} */ (entry.data)?.archivedIds ?? []) archived.add(String(id));
  }
  return log.map((entry) => (entry.archived && !archived.has(entry.eventId ?? '') ? { ...entry, archived: false, archivedBy: undefined } : entry));
}

/**
 * Revisions of the log inside one atomic decision, whose window no reader ever saw (the service's
 * time travel answers the window after the decision): a compaction's `EventsArchived` and
 * `SummaryInserted` (before its closing event), and a late answer with the events after it in its
 * append, up to the `EventsArchived` with `onArrival` that archives it.
 * @param {LogEntry[]} log
 * @returns {Set<number>}
 */
function insideDecisions(log) {
  /** @type {Set<number>} */
  const inside = new Set();
  /** @type {Map<string, number>} */
  const revisionOf = new Map();
  for (const entry of log) {
    const data = /** @type {any} */ (entry.data);
    const revision = Number(entry.revision);
    if (entry.type === 'ConversationEventAppended') revisionOf.set(entry.eventId ?? '', revision);
    else if (entry.type === 'SummaryInserted' || (entry.type === 'EventsArchived' && data?.onArrival !== true)) inside.add(revision);
    else if (entry.type === 'EventsArchived') {
      for (const id of data?.archivedIds ?? []) for (let r = revisionOf.get(id) ?? revision; r < revision; r++) inside.add(r);
    }
  }
  return inside;
}

/**
 * Window size after every revision that ends a decision, from the log: conversation events and
 * summaries add their cost, archiving removes it (the same sums the service's fold makes).
 * Revisions inside one atomic decision ({@link insideDecisions}) get no point: the curve goes from
 * the window before the decision to the window after it, as time travel does.
 * @param {LogEntry[]} log
 * @param {Schemas['Estimator']} estimator
 * @returns {Array<{ revision: number, tokens: number }>}
 */
function windowCurve(log, estimator) {
  /** @type {Map<string, number>} */
  const active = new Map();
  const inside = insideDecisions(log);
  let tokens = 0;
  const points = [];
  for (const entry of log) {
    const data = /** @type {any} */ (entry.data);
    if (entry.type === 'ConversationEventAppended' || entry.type === 'SummaryInserted') {
      const id = entry.eventId ?? '';
      tokens -= active.get(id) ?? 0;
      const cost = Number(data?.costs?.[estimator] ?? 0);
      active.set(id, cost);
      tokens += cost;
    } else if (entry.type === 'EventsArchived') {
      for (const id of data?.archivedIds ?? []) {
        tokens -= active.get(id) ?? 0;
        active.delete(id);
      }
    }
    if (!inside.has(Number(entry.revision))) points.push({ revision: Number(entry.revision), tokens });
  }
  return points;
}

/**
 * The extent of the chart's points: the first and last revision and the largest window (at least
 * 1), found in one loop: spreading the points into `Math.min(...)` overflows the call stack past
 * about 120,000 of them. With no point the revisions run from 0 to 1; `maxRev` is always above `minRev`.
 * @param {Array<{ revision: number, tokens: number }>} points
 * @returns {{ minRev: number, maxRev: number, maxTok: number }}
 */
function extent(points) {
  let minRev = points.length > 0 ? Infinity : 0;
  let maxRev = -Infinity;
  let maxTok = 1;
  for (const p of points) {
    if (p.revision < minRev) minRev = p.revision;
    if (p.revision > maxRev) maxRev = p.revision;
    if (p.tokens > maxTok) maxTok = p.tokens;
  }
  return { minRev, maxRev: Math.max(minRev + 1, maxRev), maxTok };
}

/**
 * The window-size chart, in one unit: `points` counted with `estimator`; each compaction a dashed
 * mark at its revision, dotted and grey when the compaction counted in another estimator (its
 * tooltip gives its figures in its own unit). Each mark is a link to its compaction (named
 * `compaction #2 compacted <id>: 1,200 → 300 cl100k_base`); the marks are one Tab stop, the arrow
 * keys moving between them ({@link rovingFocus}); the chart is a group named for what it draws,
 * described by a text alternative of its curve ({@link curveText}). With no window ever (no point
 * above 0 tokens, no compaction: a policy set before the first event), only `No window yet.`, no axes.
 * @param {Array<{ revision: number, tokens: number }>} points
 * @param {CompactionItem[]} compactions
 * @param {(id: string) => string} link the link that selects a compaction
 * @param {Schemas['Estimator']} estimator
 */
function chart(points, compactions, link, estimator) {
  // No window yet (a session holding only its policy): no axes drawn from made-up ranges
  // (newcomer ncui69 F10), the chart's text alone.
  if (!points.some((p) => p.tokens > 0) && compactions.length === 0)
    return h('div', { class: 'chart', id: 'chart' }, h('p', { class: 'muted', id: 'chart-text' }, curveText([], 0, estimator)));
  const NS = 'http://www.w3.org/2000/svg';
  /** @param {string} tag @param {Record<string, string | number>} attrs @param {string} [text] */
  const s = (tag, attrs, text) => {
    const el = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
    if (text !== undefined) el.textContent = text;
    return el;
  };
  const W = 900,
    H = 220,
    L = 56,
    R = 10,
    T = 10,
    B = 28;
  // A session id used again after an erasure starts after the erased revisions: the axis starts at the first one.
  const { minRev, maxRev, maxTok } = extent(points);
  const x = (/** @type {number} */ r) => L + ((r - minRev) / (maxRev - minRev)) * (W - L - R);
  const y = (/** @type {number} */ t) => H - B - (t / maxTok) * (H - T - B);
  const svg = s('svg', {
    viewBox: `0 0 ${W} ${H}`,
    preserveAspectRatio: 'none',
    role: 'group',
    'aria-label': `window size (${estimator}) over revisions`,
    'aria-describedby': 'chart-text',
  });
  svg.append(s('line', { class: 'axis', x1: L, y1: H - B, x2: W - R, y2: H - B }), s('line', { class: 'axis', x1: L, y1: T, x2: L, y2: H - B }));
  for (const t of [0, maxTok / 2, maxTok]) svg.append(s('text', { x: L - 6, y: y(t) + 4, 'text-anchor': 'end' }, fmt(Math.round(t))));
  svg.append(
    s('text', { x: W - R, y: H - 6, 'text-anchor': 'end' }, minRev > 0 ? `revision (${minRev} to ${maxRev})` : `revision (max ${maxRev})`),
    s('text', { x: L + 4, y: T + 10 }, `window, ${estimator}`),
  );
  /** @type {SVGElement[]} the marks' links, in the compaction list's order (by revision: left to right) */
  const marks = [];
  compactions.forEach((c, i) => {
    const other = c.estimator !== estimator;
    const line = s('line', {
      class: other ? 'mark other-unit' : 'mark',
      'data-compaction': c.compactionId,
      x1: x(Number(c.revision)),
      y1: T,
      x2: x(Number(c.revision)),
      y2: H - B,
    });
    const figures = `${fmt(c.tokensBefore)} → ${fmt(c.tokensAfter)} ${c.estimator}`;
    const name = `compaction #${i + 1} ${c.outcome} ${revealedText(c.compactionId)} at revision ${c.revision}: ${figures}${other ? ` (counted in ${c.estimator}, not this chart's ${estimator})` : ''}`;
    line.append(s('title', {}, name));
    const hit = s('line', { class: 'hit', x1: x(Number(c.revision)), y1: T, x2: x(Number(c.revision)), y2: H - B });
    const anchor = s('a', { href: link(c.compactionId), 'aria-label': name, 'data-compaction': c.compactionId });
    anchor.append(hit, line);
    svg.append(anchor);
    marks.push(anchor);
  });
  // A step line: the window holds its size until the next event (a point that leaves it as it
  // was adds nothing but length to the path, and is left out; the last one ends the line).
  let d = '';
  points.forEach((p, i) => {
    if (i === 0) d = `M${x(p.revision)},${y(p.tokens)}`;
    else if (p.tokens !== points[i - 1]?.tokens || i === points.length - 1) d += `H${x(p.revision)}V${y(p.tokens)}`;
  });
  svg.append(s('path', { class: 'line', d, 'aria-hidden': 'true' }));
  const chartBox = h(
    'div',
    { class: 'chart', id: 'chart' },
    /** @type {any} */ (svg),
    h('p', { class: 'sr-only', id: 'chart-text' }, curveText(points, compactions.length, estimator)),
  );
  // On the HTML box, not the <svg>: Chromium makes an SVG element with focus listeners a Tab stop.
  rovingFocus(chartBox, marks);
  return chartBox;
}

/**
 * Makes `items` (focusable elements inside `container`, in reading order) one Tab stop: only one
 * of them at a time has `tabindex="0"` (the first, then the one last focused), the others `-1`;
 * inside `container` the Right and Down arrow keys move the focus to the next item, Left and Up
 * to the previous one (stopping at the ends), Home and End to the first and last. Nothing happens
 * with no item. `container` is an HTML element: an SVG element given a focus listener becomes a
 * Tab stop of its own in Chromium.
 * @param {HTMLElement} container @param {Array<HTMLElement | SVGElement>} items
 */
function rovingFocus(container, items) {
  items.forEach((item, i) => item.setAttribute('tabindex', i === 0 ? '0' : '-1'));
  container.addEventListener('focusin', (e) => {
    if (!items.includes(/** @type {any} */ (e.target))) return;
    for (const item of items) item.setAttribute('tabindex', item === e.target ? '0' : '-1');
  });
  container.addEventListener('keydown', (/** @type {Event} */ e) => {
    const key = /** @type {KeyboardEvent} */ (e).key;
    const at = items.indexOf(/** @type {any} */ (document.activeElement));
    if (at < 0) return;
    /** @type {Record<string, number>} */
    const to = { ArrowRight: at + 1, ArrowDown: at + 1, ArrowLeft: at - 1, ArrowUp: at - 1, Home: 0, End: items.length - 1 };
    if (!(key in to)) return;
    e.preventDefault();
    items[Math.max(0, Math.min(items.length - 1, /** @type {number} */ (to[key])))]?.focus();
  });
}

/**
 * What a figure counted in `estimator` counts, in words: `characters` for `chars` (its UTF-16 code
 * units, docs/strategies-and-triggers.md "Token costs"), `tokens` for an OpenAI encoding.
 * @param {Schemas['Estimator']} estimator
 * @returns {'characters' | 'tokens'}
 */
const unitWord = (estimator) => (estimator === 'chars' ? 'characters' : 'tokens');

/**
 * The chart's text alternative, for screen readers: where the window starts and ends, and its
 * largest size: `Window size in cl100k_base: 120 tokens at revision 1, 2,400 at revision 80 (the
 * largest: 3,100 at revision 64); 2 compactions, each a link on the chart (one Tab stop: the arrow
 * keys move between them) and listed under Compactions.` (`… in chars: 480 characters at …` with
 * `chars`: {@link unitWord}). With no point: `No window yet.`
 * @param {Array<{ revision: number, tokens: number }>} points
 * @param {number} compactions how many compactions the chart marks
 * @param {Schemas['Estimator']} estimator
 */
function curveText(points, compactions, estimator) {
  const first = points[0];
  const last = points.at(-1);
  if (!first || !last) return 'No window yet.';
  let top = first;
  for (const p of points) if (p.tokens > top.tokens) top = p;
  return (
    `Window size in ${estimator}: ${fmt(first.tokens)} ${unitWord(estimator)} at revision ${first.revision}, ${fmt(last.tokens)} at revision ${last.revision} ` +
    `(the largest: ${fmt(top.tokens)} at revision ${top.revision}); ${counted(compactions, 'compaction')}, each a link on the chart ` +
    `(one Tab stop: the arrow keys move between them) and listed under Compactions.`
  );
}

/** Decision events in the log: what a compaction (or a late answer's archive) writes. */
const DECISION_TYPES = new Set(['EventsArchived', 'SummaryInserted', 'CompactionCompleted', 'CompactionFailed']);

/**
 * The log's entries by kind, in the API's words (README "the full log: conversation events …
 * and decision events"): `conversation` counts `ConversationEventAppended` (the session's
 * `eventCount`), `decision` the {@link DECISION_TYPES}, `policy` `AutoCompactionPolicySet`,
 * `other` any other type.
 * @param {LogEntry[]} log
 * @returns {{ entries: number, conversation: number, decision: number, policy: number, other: number }}
 */
function logCounts(log) {
  const counts = { entries: log.length, conversation: 0, decision: 0, policy: 0, other: 0 };
  for (const entry of log) {
    if (entry.type === 'ConversationEventAppended') counts.conversation++;
    else if (DECISION_TYPES.has(entry.type)) counts.decision++;
    else if (entry.type === 'AutoCompactionPolicySet') counts.policy++;
    else counts.other++;
  }
  return counts;
}

/** `1 log entry`, `2 log entries`. @param {number} n @param {string} one @param {string} [many] */
const counted = (n, one, many = `${one}s`) => `${fmt(n)} ${n === 1 ? one : many}`;

/**
 * Summarizer figures in words, as the API records them: calls (of which retries), the tokens the
 * endpoint reported, and the calls whose usage it did not report, whose tokens are unknown (never
 * shown as 0), e.g. `2 calls (1 retry), 400 prompt + 40 completion tokens reported; 1 call's usage
 * not reported (tokens unknown)`, or `1 call, its usage not reported (tokens unknown)`; `1 call, no
 * tokens spent` when every call reported 0 (an extractive pass's own figures); `no calls` for none (a
 * session's spend counts no extractive pass: it calls no endpoint).
 * @param {{ calls: number, retries: number, unreportedUsageCalls: number, usage: { promptTokens: number, completionTokens: number } }} f
 */
function spendText(f) {
  if (f.calls === 0) return 'no calls';
  const calls = `${counted(f.calls, 'call')}${f.retries ? ` (${counted(f.retries, 'retry', 'retries')})` : ''}`;
  const tokens = `${fmt(f.usage.promptTokens)} prompt + ${fmt(f.usage.completionTokens)} completion tokens reported`;
  // every call's usage reported, all zero (the extractive summarizer's): it read as missing usage (newcomer ncrecheck64 F5)
  if (f.unreportedUsageCalls === 0 && f.usage.promptTokens === 0 && f.usage.completionTokens === 0) return `${calls}, no tokens spent`;
  if (f.unreportedUsageCalls === 0) return `${calls}, ${tokens}`;
  if (f.unreportedUsageCalls >= f.calls) return `${calls}, ${f.calls === 1 ? 'its' : 'their'} usage not reported (tokens unknown)`;
  return `${calls}, ${tokens}; ${fmt(f.unreportedUsageCalls)} ${f.unreportedUsageCalls === 1 ? "call's" : "calls'"} usage not reported (tokens unknown)`;
}

/**
 * A session's compaction counts, each named, and how many decisions its compaction list holds
 * (compacted + failed + recorded noops), e.g. `5 compacted, 1 failed (6 in the list)`.
 * @param {SessionSummary} s
 */
function compactionCounts(s) {
  const listed = s.compactionCount + s.failedCompactionCount + s.noopCompactionCount;
  const noops = s.noopCompactionCount ? `, ${counted(s.noopCompactionCount, 'recorded noop')}` : '';
  return `${fmt(s.compactionCount)} compacted, ${fmt(s.failedCompactionCount)} failed${noops} (${fmt(listed)} in the list)`;
}

/**
 * The session list's compaction counts, in the session page's words ({@link compactionCounts})
 * without the list's total: `3 compacted`, `3 compacted, 1 failed`, `3 compacted, 1 failed, 2
 * recorded noops` (failed and noops only when there are some); `none` for 0 of each.
 * @param {SessionSummary} s
 */
function listCompactionCounts(s) {
  const parts = [`${fmt(s.compactionCount)} compacted`];
  if (s.failedCompactionCount) parts.push(`${fmt(s.failedCompactionCount)} failed`);
  if (s.noopCompactionCount) parts.push(counted(s.noopCompactionCount, 'recorded noop'));
  return s.compactionCount + s.failedCompactionCount + s.noopCompactionCount === 0 ? 'none' : parts.join(', ');
}

/**
 * How many events a compaction archived: `7 archived`, or with late answers archived on arrival
 * attributed to it, `7 archived + 1 on arrival` (together the log's events archived by it).
 * @param {CompactionItem} c
 */
const archivedCount = (c) => `${fmt(c.archivedIds.length)} archived${c.archivedOnArrival.length ? ` + ${fmt(c.archivedOnArrival.length)} on arrival` : ''}`;

/** The timeline's heading: `Log timeline (10 log entries: 7 conversation events, 3 decision events)`. @param {LogEntry[]} log */
function timelineHeading(log) {
  const c = logCounts(log);
  const parts = [counted(c.conversation, 'conversation event'), counted(c.decision, 'decision event')];
  if (c.policy) parts.push(counted(c.policy, 'policy event'));
  if (c.other) parts.push(counted(c.other, 'other entry', 'other entries'));
  return `Log timeline (${counted(c.entries, 'log entry', 'log entries')}: ${parts.join(', ')})`;
}

/** Longest stored text a timeline row shows, in UTF-16 code units (the rest is cut, with a "…"). */
const MAX_PREVIEW = 600;

/**
 * A stored text of a timeline row ({@link stored}), cut to {@link MAX_PREVIEW} with a "…" at its end.
 * @param {unknown} value
 * @param {string} [tag] `bdi` (inline, the default) or `div`
 * @returns {HTMLElement}
 */
function excerpt(value, tag = 'bdi') {
  const text = String(value ?? '');
  const [shown, cut] = clip(text, MAX_PREVIEW);
  const el = stored(shown, tag);
  if (cut) el.append(h('span', { class: 'muted', title: `${fmt(text.length)} UTF-16 code units, the first ${MAX_PREVIEW} shown` }, '…'));
  return el;
}

/**
 * A stored text of the "Window at revision" panel: as {@link excerpt}, and when cut, a button
 * (`show all 25,907 characters`, counted in UTF-16 code units) that puts the whole text in its
 * place, focused, so an auditor can read all the model was sent (newcomer ncaudit64 F4: only the
 * API showed past the 600th unit).
 * @param {unknown} value
 * @param {string} [tag] `bdi` (inline, the default) or `div`
 * @returns {HTMLElement}
 */
function wholeOnRequest(value, tag = 'bdi') {
  const text = String(value ?? '');
  const el = excerpt(text, tag);
  if (!clip(text, MAX_PREVIEW)[1]) return el;
  const show = h(
    'button',
    {
      type: 'button',
      class: 'show-all',
      onclick: () => {
        const whole = stored(text, tag);
        whole.setAttribute('tabindex', '-1');
        el.replaceWith(whole);
        whole.focus();
      },
    },
    `show all ${fmt(text.length)} characters`,
  );
  el.append(' ', show);
  return el;
}

/** Log entry types the timeline lists, each as one row; an `EventsArchived` shows as the marks on the rows it archived. */
const TIMELINE_TYPES = new Set(['ConversationEventAppended', 'SummaryInserted', 'CompactionCompleted', 'CompactionFailed', 'AutoCompactionPolicySet']);

/**
 * Rows of the timeline drawn at once: one page (docs/audit-page-and-client.md). A session
 * of at most this many rows shows them all, without page turns.
 */
const TIMELINE_PAGE = 200;

/** Rows the timeline's Page Up and Page Down keys move by. */
const TIMELINE_STEP = 10;

/** What the keyboard does on a timeline (beside it, and a row's description when the focus enters the timeline). */
const TIMELINE_KEYS = `Keyboard: the timeline is one Tab stop, a row. Up and Down arrows go to the previous and next row (across pages), Page Up and Page Down ${TIMELINE_STEP} rows, Home and End the first and last; Enter or Space opens the row's compaction (its "archived by" or marker link; a row without one has no action); Tab goes through the row's links, then leaves the timeline.`;

/**
 * A timeline row's primary action, what Enter or Space on the row does: its first link or button
 * shown ("archived by", a compaction's marker); undefined for a row with none.
 * @param {Element} row
 * @returns {HTMLElement | undefined}
 */
function primaryAction(row) {
  return /** @type {HTMLElement | undefined} */ ([...row.querySelectorAll('a, button')].find((el) => !(/** @type {HTMLElement} */ (el).hidden)));
}

/**
 * When a log entry happened, for its timeline row (`<span class="when">`): the time the store
 * recorded it (`recordedAt`, {@link timeOf}), and for a conversation event whose client gave a
 * `createdAt` at another instant, that too, both named: `recorded 2026-03-08 07:31:02.120 UTC,
 * client time 2026-03-08 07:30:00.000 UTC` (the client's value as it sent it in its tooltip).
 * @param {LogEntry} entry
 * @returns {HTMLElement}
 */
function entryTime(entry) {
  const client = entry.type === 'ConversationEventAppended' ? /** @type {{ createdAt?: unknown }} */ (entry.data).createdAt : undefined;
  const differs = typeof client === 'string' && Date.parse(client) !== Date.parse(entry.recordedAt);
  return h(
    'span',
    { class: 'when' },
    differs ? 'recorded ' : null,
    timeOf(entry.recordedAt, 'recorded (recordedAt)', 'recorded'),
    differs ? [', client time ', timeOf(client, "the client's createdAt", 'client-time')] : null,
  );
}

/**
 * The accessible name of a link that shows `archived by <short id>`: its visible words first, as
 * shown (WCAG 2.5.3, label in name: a speech user says what they see), then the full id when the
 * one shown is shortened: `archived by 1b2c3d4e…, compaction 1b2c3d4e-5f60-…`; an id short enough
 * to be shown whole: `archived by c-7`. Hidden characters as markers ({@link revealedText}).
 * @param {string} compactionId
 */
function archivedByName(compactionId) {
  const shown = short(compactionId);
  return `archived by ${revealedText(shown)}${shown === compactionId ? '' : `, compaction ${revealedText(compactionId)}`}`;
}

/**
 * A timeline row's "archived by <short id>" mark (class `archived-by`): a link selecting compaction
 * `compactionId` (a Tab stop; Enter opens its details), named {@link archivedByName}.
 * @param {string} compactionId @param {(id: string) => void} select
 * @returns {HTMLElement}
 */
function archivedByLink(compactionId, select) {
  return h(
    'a',
    {
      class: 'badge archived archived-by',
      href: '#',
      'aria-label': archivedByName(compactionId),
      onclick: (e) => (e.preventDefault(), select(compactionId)),
    },
    'archived by ',
    stored(short(compactionId)),
  );
}

/**
 * What the page calls an event's kind: its type, but `notice` for a system notice (DESIGN §3.1: a message injected into
 * the conversation, such as "a file arrived": a real event, sent to the model in its place, never pinned). In a window,
 * `role` tells the stored system messages apart (DESIGN §3.2): the pinned one, the latest, which the model gets first,
 * and a superseded one, which a newer replaced: not sent, and archived by the next pass (`archived`: by the
 * compaction whose details show it, which says so).
 * @param {{ type?: string, notice?: boolean }} event @param {'pinned' | 'superseded'} [role] @param {'archived'} [archived]
 * @returns {HTMLElement} the kind's `<span class="kind">`, with a tooltip saying what it means for the model
 */
function kindLabel(event, role, archived) {
  if (event.type === 'system' && event.notice === true)
    return h('span', { class: 'kind', title: 'a notice: a message injected into the conversation, sent in its place (never pinned)' }, 'notice');
  if (role === 'pinned') return h('span', { class: 'kind', title: 'the pinned system message: the latest, which the model gets first' }, 'system · pinned');
  if (role === 'superseded')
    return h(
      'span',
      {
        class: 'kind',
        title: `a newer system message replaced it: not sent to the model; ${archived === 'archived' ? 'this compaction archived it' : 'the next compaction archives it'}`,
      },
      'system · superseded',
    );
  return h('span', { class: 'kind' }, event.type ?? '');
}

/**
 * The role of each stored system message of a window's events (DESIGN §3.2): the last one that is not a notice is
 * pinned, the others superseded; undefined for every other event.
 * @param {ReadonlyArray<{ type?: string, notice?: boolean }>} events
 * @returns {Array<'pinned' | 'superseded' | undefined>} one per event, same order
 */
function systemRoles(events) {
  const stored = (/** @type {{ type?: string, notice?: boolean }} */ e) => e.type === 'system' && e.notice !== true;
  let pinned = -1;
  events.forEach((e, i) => {
    if (stored(e)) pinned = i;
  });
  return events.map((e, i) => (i === pinned ? 'pinned' : stored(e) ? 'superseded' : undefined));
}

/**
 * One timeline row for a log entry of {@link TIMELINE_TYPES}: `<li>` with its revision and time
 * first (`#12 2026-01-01 09:00:00.000 UTC `, {@link entryTime}). A conversation event or summary carries `data-event` and, when archived, the class
 * `archived` and "archived by <compaction>" (a link that selects it, {@link archivedByLink}); a
 * compaction's closing event is a `decision` row with `data-compaction`, its figures in its own
 * estimator and a link that selects it; a policy change is a `decision` row. A superseded system
 * message archived says so beside its "archived by" ({@link SUPERSEDED_WHY}, class `superseded-note`), and a
 * compaction's row how many of its archived events were ones (newcomer ncui69 F3).
 * @param {LogEntry} entry
 * @param {Map<string, CompactionItem>} byId
 * @param {(id: string) => void} select
 * @param {ReadonlyMap<string, LogEntry>} events the page's conversation events by id
 * @returns {HTMLElement}
 */
function timelineRow(entry, byId, select, events) {
  const data = /** @type {any} */ (entry.data);
  const rev = [h('span', { class: 'muted' }, `#${entry.revision} `), entryTime(entry), ' '];
  if (entry.type === 'ConversationEventAppended') {
    const event = data?.event ?? {};
    const lines =
      event.type === 'tool'
        ? (event.responses ?? []).map((/** @type {any} */ r) => h('div', {}, stored(r.name), ': ', excerpt(r.data)))
        : [
            event.text ? excerpt(event.text, 'div') : null,
            ...(event.toolCalls ?? []).map((/** @type {any} */ c) => h('div', {}, '→ ', stored(c.name), '(', excerpt(c.arguments), ')')),
          ];
    // a late answer archived when it arrived (newcomer ncaudit72 F3: the row read only "archived by", as if by a pass before it)
    const onArrival = entry.archived && entry.archivedBy ? byId.get(entry.archivedBy)?.archivedOnArrival.find((a) => a.eventId === entry.eventId) : undefined;
    return h(
      'li',
      { class: entry.archived ? 'archived' : '', 'data-event': entry.eventId },
      rev,
      kindLabel({ type: entry.kind ?? '', notice: event.notice }),
      h('span', { class: 'muted' }, stored(entry.eventId), ' '),
      entry.archived && entry.archivedBy ? archivedByLink(entry.archivedBy, select) : null,
      entry.archived && entry.archivedBy && isStoredSystem(entry) ? h('span', { class: 'muted superseded-note' }, ` ${SUPERSEDED_WHY}`) : null,
      onArrival ? h('span', { class: 'muted on-arrival-note' }, ` on arrival, at revision ${onArrival.revision}: ${ON_ARRIVAL_WHY}`) : null,
      h('div', { class: 'preview' }, lines),
    );
  }
  if (entry.type === 'SummaryInserted')
    return h(
      'li',
      { class: entry.archived ? 'archived summary' : 'summary', 'data-event': entry.eventId },
      rev,
      h('span', { class: 'kind' }, 'summary'),
      h('span', { class: 'muted' }, stored(entry.eventId), ' by ', stored(short(entry.compactionId ?? ''))),
      entry.archived && entry.archivedBy ? archivedByLink(entry.archivedBy, select) : null,
      stored(data?.text, 'div', { class: 'preview' }),
    );
  if (entry.type === 'CompactionCompleted' || entry.type === 'CompactionFailed') {
    const c = byId.get(entry.compactionId ?? '');
    const superseded = c ? supersededOf(c, events).length : 0;
    return h(
      'li',
      { class: 'decision', 'data-compaction': entry.compactionId },
      rev,
      h(
        'a',
        {
          href: '#',
          'aria-label': `compaction ${revealedText(entry.compactionId ?? '')}`,
          onclick: (e) => (e.preventDefault(), select(entry.compactionId ?? '')),
        },
        '◆ compaction ',
        stored(short(entry.compactionId ?? '')),
      ),
      c ? ` ${c.outcome} (${c.origin}, ${c.strategy.type}): ${fmt(c.tokensBefore)} → ${fmt(c.tokensAfter)} ${c.estimator}, ${archivedCount(c)}` : '',
      superseded
        ? ` (of which ${superseded === 1 ? 'a superseded system message' : `${fmt(superseded)} superseded system messages`}: a newer one replaced ${superseded === 1 ? 'it' : 'them'}, not sent to the model)`
        : null,
      c?.reason ? `, ${c.reason}` : null,
      c?.toolCallId ? [' (tool call ', stored(c.toolCallId), ')'] : null,
      c?.triggerStillFires ? h('span', { class: 'badge archived', title: stillFiresTitle }, 'trigger still fires') : null,
      // the kind (a closed set of plain words) before the reason; absent for a failure recorded before failures carried one
      c?.failure ? [`, failed at ${c.failure.stage}${c.failure.failureKind ? ` (${c.failure.failureKind})` : ''}: `, stored(c.failure.reason)] : null,
    );
  }
  // The policy whole (newcomer ncaudit64 F3: two policies of one strategy type read alike, and a compaction links to this row).
  return h(
    'li',
    { class: 'decision', 'data-policy': entry.revision },
    rev,
    '◇ policy set: ',
    // the whole policy in the tooltip: prompts past their first 40 characters (newcomer ncrecheck64b N2)
    data?.strategy ? h('span', { class: 'policy', title: policyTitle(data) }, policyText(data)) : 'cleared',
    // who set or cleared it (newcomer ncui74 F1: an automatic pass's "who asked" ended at an anonymous policy row); none before 2026-12-07
    data?.requestedBy ? h('span', { class: 'muted policy-set-by' }, data.strategy ? ', set by ' : ' by ', requestedByParts(data.requestedBy)) : null,
  );
}

/**
 * The index of the first of `rows` (in revision order) whose revision is `revision` or later;
 * `rows.length` when none is. A binary search: a timeline holds up to hundreds of thousands of rows.
 * @param {LogEntry[]} rows
 * @param {number} revision
 */
function firstRowFrom(rows, revision) {
  let low = 0;
  let high = rows.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (Number(rows[mid]?.revision) < revision) low = mid + 1;
    else high = mid;
  }
  return low;
}

/**
 * Scrolls the scroll box `list` (and nothing around it: the page stays where it is) so that its
 * child `row` is in view, centred, unless it is in view already.
 * @param {HTMLElement} list @param {HTMLElement} row
 */
function scrollIntoList(list, row) {
  const box = list.getBoundingClientRect();
  const at = row.getBoundingClientRect();
  if (at.top >= box.top && at.bottom <= box.bottom) return;
  list.scrollTop += at.top - box.top - Math.max(0, (box.height - at.height) / 2);
}

/**
 * The timeline on screen: its nodes (the pager, its page turns shown when it has more than one
 * page, and the list `#timeline`); `showCompaction(id, reveal)`, which marks that compaction's row (`selected`,
 * `aria-current`; undefined: none) and, unless `reveal` is false, brings it into view, turning to
 * its page; `firstRevision()`, the revision of the first row of the page on screen (undefined
 * with no row); `focusTarget()`, which moves the keyboard focus to the row "Go to revision" or
 * "Go to time" marked (none: nothing moves); `placeOf(element)`, where an element of the timeline
 * is (its row in the whole and its place among the row's links and buttons; undefined for an
 * element outside the list), and `focusPlace(place)`, which turns back to that row's page when
 * another page is on screen and focuses that link again (the link that opened a compaction whose
 * marker is on another page: the page turned, the link left the screen), answering it (undefined
 * for a place not on this timeline); `viewAt(revision)`, which marks the rows as of that revision,
 * the one whose window "Window at revision" shows (undefined: as of the page's revision);
 * `goToEvent(eventId, justRead)`, which goes to that event's row as "Go to revision" goes to a revision (a
 * recall hit's row link), or says it is not on this timeline: on a timeline read earlier, with an offer to read
 * again and go to it (written since, or erased); `justRead` (the page was read for this link), that it was erased
 * or is not the session's; `goToRevision(revision)`, which is
 * "Go to revision" (a link to a revision's row, such as a compaction's policy revision); `forgetGoneTo()`,
 * which unmarks the row gone to and empties "Go to revision" and "Go to time" and their statuses.
 * @typedef {{
 *   nodes: HTMLElement[],
 *   showCompaction: (compactionId: string | undefined, reveal?: boolean) => void,
 *   firstRevision: () => number | undefined,
 *   focusTarget: () => void,
 *   placeOf: (element: Element | null) => TimelinePlace | undefined,
 *   focusPlace: (place: TimelinePlace) => HTMLElement | undefined,
 *   viewAt: (revision: number | undefined) => void,
 *   goToEvent: (eventId: string, justRead?: boolean) => void,
 *   goToRevision: (revision: bigint) => void,
 *   forgetGoneTo: () => void,
 * }} Timeline
 */

/**
 * A place on the timeline: the index of a row in the whole timeline (0-based), and which of its
 * links and buttons (`nth`, in document order; -1: the row itself).
 * @typedef {{ index: number, nth: number }} TimelinePlace
 */

/**
 * The event the service's time travel resolved a time to (`resolved` of `GET …/window?atTime=`):
 * its revision and when the store recorded it (ISO-8601).
 * @typedef {{ revision: string, recordedAt: string }} ResolvedTime
 */

/**
 * What the timeline's "Go to time" needs: `resolve(time)`, the event the service's time travel
 * resolves a time to, with the window right after it (the answer, in the events format); `asOf`,
 * the page's revision; `readAgainAt(resolved)`, reads the page again and goes to that event; `readAgainAtEvent(eventId)`, the same for an event by its id;
 * `opened`, the event to go to when the timeline opens (the page was read again for it);
 * `showWindow(revision, window, resolved)`, which shows the window at the revision gone to in the
 * "Window at revision" panel ({@link windowAtPanel}); `closeWindow()`, which closes that panel (a
 * refused time: the window of an earlier one beside the refusal read as its answer).
 * @typedef {{
 *   resolve: (time: string) => Promise<{ resolved: ResolvedTime, window: Schemas['Window'] }>,
 *   asOf: bigint,
 *   readAgainAt: (resolved: ResolvedTime) => void,
 *   readAgainAtEvent: (eventId: string) => void,
 *   opened?: ResolvedTime,
 *   showWindow: (revision: number, window?: Schemas['Window'], resolved?: ResolvedTime) => void,
 *   closeWindow: () => void,
 * }} TimeTravel
 */

/**
 * The log timeline, drawn a page at a time: the log's rows ({@link TIMELINE_TYPES}, one
 * {@link timelineRow} each) in pages of {@link TIMELINE_PAGE}, so a session of any length draws at
 * most that many rows (drawing 130,000 rows at once froze the tab for a minute). Above the list,
 * the pager (`#timeline-pager`): with more rows than a page, First, Previous, Next and Last
 * buttons and the rows and revisions on screen (`201–400 of 129,870 rows (revisions 200–399)`, a
 * live region; `#timeline-pages`); on every timeline "Go to revision" (the page with the first row at or after it, that row
 * marked `target` and scrolled into view) and "Go to time" (an ISO-8601 date-time: the service's
 * time travel, `GET …/window?atTime=`, resolves it to the last event recorded at or before it, the
 * one rule of that API; then as "Go to revision" to that revision, the status naming it and its
 * recorded time, or the service's refusal ({@link timeRefusal}), e.g. a time before the session's
 * first event, with no row marked; only the latest time asked counts; an event with no row at or after it on this
 * timeline, i.e. written after the page was read, marks no row either: the status says so, with a
 * "read again" link that reads the session again and goes to it). Selecting a compaction turns to its row
 * ({@link Timeline}`.showCompaction`); one row at a time carries `aria-current`: the row gone to,
 * else the selected compaction's. Every row carries its place in the whole
 * (`aria-posinset`, `aria-setsize`), for screen readers. The list is one Tab stop, a row (a roving
 * tabindex: the page's first row, then the one last focused or gone to; {@link TIMELINE_KEYS}):
 * the arrow keys, Page Up/Down, Home and End move the focus between rows, turning pages; Enter or
 * Space runs the row's {@link primaryAction}; Tab goes through the row's links, then leaves.
 * @param {LogEntry[]} log the page's log (as of its revision)
 * @param {Map<string, CompactionItem>} byId the page's compactions
 * @param {(id: string) => void} select selects a compaction (its link)
 * @param {TimeTravel} timeTravel "Go to time": the service's time travel, the page's revision,
 *   reading the page again to go to an event, and the event gone to when the page opens
 * @param {number} [from] a revision: the timeline opens on the page of the first row at or after
 *   it (the "read again" of a page keeps the timeline's page); the first page without it
 * @param {ErasedLives} [erased] the session id's erased earlier lives (written again after an
 *   erasure): "Go to revision" into one names it ({@link revisionTarget})
 * @returns {Timeline}
 */
function timeline(log, byId, select, timeTravel, from, erased) {
  /** @type {LogEntry[]} */
  const rows = [];
  /** @type {Map<string, number>} each compaction's row: the index of its closing event in `rows` */
  const rowOf = new Map();
  /** @type {Map<string, number>} each archived event's archiving: the revision of the `EventsArchived` that archived it */
  const archivedAt = new Map();
  /** @type {Map<string, LogEntry>} the conversation events by id */
  const events = new Map();
  /** The log's first revision: past 0 for a session id written again after an erasure (the revisions before were erased). */
  const lifeStart = log[0] === undefined ? 0 : Number(log[0].revision);
  for (const entry of log) {
    if (entry.type === 'ConversationEventAppended' && entry.eventId !== undefined) events.set(entry.eventId, entry);
    if (entry.type === 'EventsArchived')
      for (const id of /** @type {any} */ (entry.data)?.archivedIds ?? []) archivedAt.set(String(id), Number(entry.revision));
    if (!TIMELINE_TYPES.has(entry.type)) continue;
    if (entry.type === 'CompactionCompleted' || entry.type === 'CompactionFailed') rowOf.set(entry.compactionId ?? '', rows.length);
    rows.push(entry);
  }
  /** @type {number | undefined} the revision the rows are marked as of ("Window at revision"; undefined: the page's) */
  let view;
  /** What the archived marks are as of, above the list. */
  const marksNote = h('p', { class: 'muted', id: 'timeline-marks' });
  const sayMarks = () => {
    marksNote.textContent =
      view === undefined
        ? `"Archived by" marks as of revision ${timeTravel.asOf}, the page's revision.`
        : `"Archived by" marks as of revision ${view}, the window shown under "Window at revision ${view}": an event archived after it says "archived later", and rows written after it are dimmed.`;
  };
  sayMarks();
  /**
   * Marks row `item` (for `entry`) as of the revision viewed: an event archived after it is not
   * marked archived (its "archived by" link hidden, "archived later, at revision M" said instead),
   * and a row written after it is dimmed (`after-view`, "written after revision N" for screen readers).
   * @param {HTMLElement} item @param {LogEntry} entry
   */
  const applyView = (item, entry) => {
    const after = view !== undefined && Number(entry.revision) > view;
    item.classList.toggle('after-view', after);
    item.querySelector('.after-note')?.remove();
    if (after) item.append(h('span', { class: 'sr-only after-note' }, ` (written after revision ${view})`));
    if (!entry.archived) return;
    const at = archivedAt.get(entry.eventId ?? '');
    const later = view !== undefined && at !== undefined && at > view;
    item.classList.toggle('archived', !later);
    const link = /** @type {HTMLElement | null} */ (item.querySelector('.archived-by'));
    if (link) link.hidden = later;
    for (const note of /** @type {NodeListOf<HTMLElement>} */ (item.querySelectorAll('.superseded-note, .on-arrival-note'))) note.hidden = later;
    item.querySelector('.archived-later')?.remove();
    if (later && !after) link?.after(h('span', { class: 'badge archived-later' }, `archived later, at revision ${at}`));
  };
  // A scroll box named by its heading; its one Tab stop is a row ({@link TIMELINE_KEYS}), which the arrow keys move and scroll.
  const list = h('ol', { class: 'timeline', id: 'timeline', 'aria-labelledby': 'timeline-heading' });
  /** What the keyboard does on the timeline: said beside it, and to a screen reader as the row's description when the focus enters it. */
  const keysNote = h('p', { class: 'muted', id: 'timeline-keys' }, TIMELINE_KEYS);
  /** @type {number} the row (an index in `rows`) that is the timeline's one Tab stop (a roving tabindex) */
  let active = 0;
  /**
   * Makes row `index` the timeline's one Tab stop (`tabindex="0"`, with its links and buttons: Tab
   * goes through them, then leaves the timeline); every other row and its links `tabindex="-1"`.
   * @param {number} index
   */
  const setStop = (index) => {
    active = index;
    [...list.children].forEach((item, i) => {
      const on = start + i === index;
      item.setAttribute('tabindex', on ? '0' : '-1');
      for (const action of item.querySelectorAll('a, button')) action.setAttribute('tabindex', on ? '0' : '-1');
    });
  };
  /** The row of the list that holds `el` (or is it), and its index in `rows`; undefined outside the list. @param {EventTarget | null} el */
  const rowAt = (el) => {
    let row = /** @type {Element | null} */ (el instanceof Element ? el : null);
    while (row && row.parentElement !== list) row = row.parentElement;
    return row ? { row: /** @type {HTMLElement} */ (row), index: start + [...list.children].indexOf(row) } : undefined;
  };
  /** Moves the keyboard focus to row `index` (clamped to the timeline), turning to its page. @param {number} index */
  const moveTo = (index) => {
    const to = Math.max(0, Math.min(rows.length - 1, index));
    if (to < start || to >= start + TIMELINE_PAGE) draw(pageOf(to), to);
    const row = /** @type {HTMLElement | undefined} */ (list.children[to - start]);
    if (!row) return;
    scrollIntoList(list, row);
    focusOn(row);
  };
  list.addEventListener('focusin', (/** @type {Event} */ e) => {
    const at = rowAt(e.target);
    if (!at) return;
    if (at.index !== active || at.row.tabIndex !== 0) setStop(at.index);
    // Entering the timeline from outside, a screen reader hears what the keys do (not at every arrow key).
    const outside = !list.contains(/** @type {Node | null} */ (/** @type {FocusEvent} */ (e).relatedTarget));
    for (const item of list.querySelectorAll('li[aria-describedby]')) if (item !== at.row || !outside) item.removeAttribute('aria-describedby');
    if (outside && e.target === at.row) at.row.setAttribute('aria-describedby', 'timeline-keys');
  });
  list.addEventListener('keydown', (/** @type {Event} */ e) => {
    const { key, altKey, ctrlKey, metaKey, shiftKey } = /** @type {KeyboardEvent} */ (e);
    const at = rowAt(document.activeElement);
    if (!at || altKey || ctrlKey || metaKey) return;
    if (key === 'Enter' || key === ' ') {
      // On the row itself (a link keeps its own Enter): its primary action, the first link it shows.
      if (document.activeElement !== at.row || shiftKey) return;
      e.preventDefault();
      /** @type {HTMLElement | undefined} */ (primaryAction(at.row))?.click();
      return;
    }
    /** @type {Record<string, number>} */
    const to = {
      ArrowDown: at.index + 1,
      ArrowUp: at.index - 1,
      PageDown: at.index + TIMELINE_STEP,
      PageUp: at.index - TIMELINE_STEP,
      Home: 0,
      End: rows.length - 1,
    };
    if (!(key in to) || shiftKey) return;
    e.preventDefault();
    moveTo(/** @type {number} */ (to[key]));
  });
  const paged = rows.length > TIMELINE_PAGE;
  const lastStart = Math.max(0, Math.floor((rows.length - 1) / TIMELINE_PAGE) * TIMELINE_PAGE);
  /** the index of the page's first row */
  let start = 0;
  /** @type {string | undefined} the selected compaction */
  let selected;
  /** Whether `showCompaction` was not called yet (the page opening). */
  let opening = true;
  const range = h('span', { id: 'timeline-range', role: 'status' });
  /** @param {string} id @param {string} label @param {() => number} to the first row of the page it turns to */
  const turn = (id, label, to) => {
    const button = h('button', { type: 'button', id, onclick: () => button.getAttribute('aria-disabled') !== 'true' && draw(to()) }, label);
    return button;
  };
  const buttons = {
    first: turn('timeline-first', 'First', () => 0),
    previous: turn('timeline-previous', 'Previous', () => start - TIMELINE_PAGE),
    next: turn('timeline-next', 'Next', () => start + TIMELINE_PAGE),
    last: turn('timeline-last', 'Last', () => lastStart),
  };
  const revision = /** @type {HTMLInputElement} */ (
    h('input', { type: 'number', name: 'revision', min: '0', step: '1', required: true, placeholder: 'revision' })
  );
  const time = /** @type {HTMLInputElement} */ (
    h('input', {
      type: 'text',
      name: 'time',
      required: true,
      size: '24',
      placeholder: '2026-01-31T12:00:00Z',
      'aria-describedby': 'timeline-time-clock timeline-time-status',
    })
  );
  const timeStatus = h('span', { id: 'timeline-time-status', role: 'status' });
  const revisionStatus = h('span', { id: 'timeline-goto-status', role: 'status' });
  /** The number of the latest "Go to time" (an answer to an earlier one is dropped). */
  let timeAsked = 0;
  /**
   * Unmarks the row "Go to revision" or "Go to time" marked (`target`, `aria-current="location"`);
   * the selected compaction's row carries `aria-current` again.
   */
  const clearTarget = () => {
    for (const row of list.querySelectorAll('li.target')) {
      row.classList.remove('target');
      if (row.getAttribute('aria-current') === 'location') row.removeAttribute('aria-current');
    }
    markSelected();
  };
  /**
   * Goes to the event "Go to time" resolved to, as "Go to revision" does, and names it in the
   * status; an event with no row at or after it here (written after the page was read) marks no
   * row: the status says so and offers to read the page again, going to it.
   * @param {ResolvedTime} resolved @param {Schemas['Window']} [window] the window right after it, when read already
   */
  const goToResolved = (resolved, window) => {
    const named = [`revision ${resolved.revision}, recorded `, timeOf(resolved.recordedAt, 'recorded')];
    const index = firstRowFrom(rows, Number(resolved.revision));
    if (index < rows.length) {
      draw(pageOf(index), index, 'target');
      revisionStatus.textContent = '';
      timeTravel.showWindow(Number(resolved.revision), window, resolved);
      return timeStatus.replaceChildren(...named);
    }
    clearTarget();
    timeStatus.replaceChildren(
      ...named,
      `: not on this page, which shows the session as of revision ${timeTravel.asOf} (written after it was read): `,
      h('a', { href: '#', id: 'timeline-time-reread', onclick: (e) => (e.preventDefault(), timeTravel.readAgainAt(resolved)) }, 'read again and go to it'),
    );
  };
  /**
   * "Go to revision" `asked`: the row at or after it marked and focused, the status saying where
   * it went ({@link revisionTarget}), and the window right after it opened (after a revision erased
   * with an earlier life: after the row gone to, the first of this life); the box shows `asked`.
   * @param {bigint} asked (a bigint: a revision of 20 digits is named as asked, not rounded as a float)
   */
  const goToRevision = (asked) => {
    revision.value = String(asked);
    const { index, text } = revisionTarget(rows, asked, lifeStart, erased?.erasures);
    timeStatus.textContent = '';
    revisionStatus.textContent = text;
    if (index === undefined) {
      // past the end: no window is this revision's, nor the one of the revision gone to before (newcomer ncrecheck64 F4)
      timeTravel.closeWindow();
      return clearTarget();
    }
    draw(pageOf(index), index, 'target');
    // The window the model was sent right after the revision asked (the row gone to may be a later one); of a
    // revision erased with an earlier life, whose windows are not kept, the window of the row gone to, the first of
    // this life (newcomer ncui74 F3: "Window at revision 5" showed the service's 400 revision_out_of_range).
    const erasedLife = asked < BigInt(lifeStart);
    timeTravel.showWindow(erasedLife ? Number(rows[index]?.revision) : Number(asked));
  };
  const pager = h(
    'nav',
    { class: 'pager', id: 'timeline-pager', 'aria-label': paged ? 'timeline pages' : 'timeline' },
    // Page turns only with more than one page; "Go to revision" and "Go to time" on every timeline.
    h('span', { id: 'timeline-pages', hidden: !paged }, buttons.first, buttons.previous, range, buttons.next, buttons.last),
    h(
      'form',
      {
        class: 'inline',
        id: 'timeline-goto',
        onsubmit: (e) => {
          e.preventDefault();
          const typed = revision.value.trim();
          if (/^\d+$/.test(typed)) return goToRevision(BigInt(typed));
          // the number box takes 1e3 or 1.0 too: refused as the link #/s/<id>/r/<revision> refuses it (newcomer ncaudit72 F8: it went to "revision 1000")
          clearTarget();
          timeTravel.closeWindow();
          timeStatus.textContent = '';
          const meant = Number(typed);
          revisionStatus.replaceChildren(
            stored(typed),
            ` is not a revision: a revision is a whole number from 0, in digits${Number.isSafeInteger(meant) && meant >= 0 ? ` (type ${meant})` : ''}; no row marked`,
          );
        },
      },
      h('label', {}, 'Go to revision ', revision),
      h('button', { type: 'submit' }, 'Go'),
      revisionStatus,
    ),
    h(
      'form',
      {
        class: 'inline',
        id: 'timeline-goto-time',
        onsubmit: async (/** @type {Event} */ e) => {
          e.preventDefault();
          const asked = ++timeAsked;
          const typed = time.value.trim();
          timeStatus.textContent = 'resolving…';
          try {
            const { resolved, window } = await timeTravel.resolve(typed);
            if (asked === timeAsked) goToResolved(resolved, window);
          } catch (err) {
            if (asked !== timeAsked) return;
            clearTarget();
            // the window of the time gone to before is not this time's answer (newcomer ncaudit64 F8)
            timeTravel.closeWindow();
            timeStatus.replaceChildren(stored(timeRefusal(err, typed)));
          }
        },
      },
      // The store's clock, not the client time some rows show beside it (a customer's "an hour ago").
      h('label', {}, 'Go to time (store time, recordedAt) ', time),
      h(
        'span',
        { class: 'muted', id: 'timeline-time-clock' },
        'goes by when the store recorded each event ("recorded" on a row), not the client time a row may show beside it',
      ),
      h('button', { type: 'submit' }, 'Go'),
      timeStatus,
    ),
  );

  /**
   * Draws the page of rows from `from` (clamped to the first and last page), and brings the row
   * `focus` (an index in `rows`) into view, marked with the class `mark` when given; without it
   * the list starts at its top (at its end on the last page, where the newest rows are).
   * @param {number} from @param {number} [focus] @param {string} [mark]
   */
  const draw = (from, focus, mark) => {
    start = Math.max(0, Math.min(from, lastStart));
    const end = Math.min(start + TIMELINE_PAGE, rows.length);
    /** @type {HTMLElement[]} */
    const items = [];
    for (let i = start; i < end; i++) {
      const entry = /** @type {LogEntry} */ (rows[i]);
      const item = timelineRow(entry, byId, select, events);
      item.setAttribute('aria-posinset', String(i + 1));
      item.setAttribute('aria-setsize', String(rows.length));
      if (i === focus && mark) item.classList.add(mark);
      if (i === focus && mark === 'target') item.setAttribute('aria-current', 'location');
      applyView(item, entry);
      items.push(item);
    }
    fill(list, items);
    // The Tab stop: the row gone to, else the one that was (on this page), else the page's first.
    setStop(focus !== undefined ? focus : active >= start && active < end ? active : start);
    markSelected();
    const first = rows[start]?.revision;
    const last = rows[end - 1]?.revision;
    range.textContent = `${fmt(start + 1)}–${fmt(end)} of ${counted(rows.length, 'row')} (revisions ${first}–${last})`;
    for (const [button, off] of [
      [buttons.first, start === 0],
      [buttons.previous, start === 0],
      [buttons.next, start === lastStart],
      [buttons.last, start === lastStart],
    ])
      /** @type {HTMLElement} */ (button).setAttribute('aria-disabled', String(off));
    const row = focus === undefined ? undefined : /** @type {HTMLElement | undefined} */ (items[focus - start]);
    if (row && list.isConnected) scrollIntoList(list, row);
    else list.scrollTop = focus === undefined && start === lastStart && paged ? list.scrollHeight : 0;
    // The row gone to takes the keyboard focus (a screen reader reads it); not a Tab stop.
    if (row && mark === 'target') focusOn(row);
  };
  /** The first row of the page holding row `index`. @param {number} index */
  const pageOf = (index) => Math.floor(index / TIMELINE_PAGE) * TIMELINE_PAGE;
  /**
   * Marks the selected compaction's row on the page (`selected`), and only it. One row at a time
   * carries `aria-current`: the row "Go to revision" or "Go to time" went to (`location`) while it
   * is marked, else the selected compaction's (`true`).
   */
  const markSelected = () => {
    const goneTo = list.querySelector('li.target') !== null;
    for (const item of list.querySelectorAll('li[data-compaction]')) {
      const on = item.getAttribute('data-compaction') === selected;
      item.classList.toggle('selected', on);
      if (on && !goneTo) item.setAttribute('aria-current', 'true');
      else if (item.getAttribute('aria-current') === 'true') item.removeAttribute('aria-current');
    }
  };
  draw(from === undefined ? 0 : pageOf(firstRowFrom(rows, from)));
  if (timeTravel.opened) goToResolved(timeTravel.opened);
  return {
    nodes: [pager, marksNote, keysNote, list],
    showCompaction: (id, reveal = true) => {
      // Another compaction selected: the row gone to is no longer where the reader is (one aria-current at a time).
      // (Not the page's first call, which shows the link's compaction beside the row a reread went to.)
      if (!opening && id !== undefined && id !== selected) clearTarget();
      opening = false;
      selected = id;
      const index = id === undefined ? undefined : rowOf.get(id);
      if (index === undefined || !reveal) return markSelected();
      if (index < start || index >= start + TIMELINE_PAGE) return draw(pageOf(index), index);
      markSelected();
      const row = /** @type {HTMLElement | undefined} */ (list.children[index - start]);
      if (row) scrollIntoList(list, row);
    },
    firstRevision: () => (rows[start] === undefined ? undefined : Number(rows[start]?.revision)),
    focusTarget: () => focusOn(/** @type {HTMLElement | null} */ (list.querySelector('li.target'))),
    placeOf: (element) => {
      let row = element;
      while (row && row.parentElement !== list) row = row.parentElement;
      if (!row || !element) return undefined;
      const at = [...list.children].indexOf(row);
      return { index: start + at, nth: [...row.querySelectorAll('a, button')].indexOf(element) };
    },
    focusPlace: ({ index, nth }) => {
      if (index < 0 || index >= rows.length) return undefined;
      if (index < start || index >= start + TIMELINE_PAGE) draw(pageOf(index), index);
      const row = /** @type {HTMLElement | undefined} */ (list.children[index - start]);
      if (!row) return undefined;
      scrollIntoList(list, row);
      const el = nth < 0 ? row : /** @type {HTMLElement | undefined} */ (row.querySelectorAll('a, button')[nth]);
      focusOn(el ?? row);
      return el ?? row;
    },
    goToRevision,
    forgetGoneTo: () => {
      revision.value = '';
      time.value = '';
      timeAsked++;
      revisionStatus.textContent = '';
      timeStatus.textContent = '';
      clearTarget();
    },
    goToEvent: (eventId, justRead = false) => {
      const index = rows.findIndex((r) => r.eventId === eventId);
      timeStatus.textContent = '';
      const entry = rows[index];
      if (entry === undefined) {
        clearTarget();
        // Read for this link just now: reading again would find the same (newcomer ncrecheck69 N5: the offer repeated).
        if (justRead)
          return revisionStatus.replaceChildren(
            'event ',
            stored(eventId),
            ` is not on this timeline, read just now (as of revision ${timeTravel.asOf}): it was erased, or is not this session's`,
          );
        return revisionStatus.replaceChildren(
          'event ',
          stored(eventId),
          ` is not on this timeline (as of revision ${timeTravel.asOf}): written after the page was read, or erased: `,
          h(
            'a',
            { href: '#', id: 'timeline-event-reread', onclick: (e) => (e.preventDefault(), timeTravel.readAgainAtEvent(eventId)) },
            'read again and go to it',
          ),
        );
      }
      draw(pageOf(index), index, 'target');
      revisionStatus.replaceChildren('went to event ', stored(eventId), `, revision ${entry.revision} (row ${fmt(index + 1)} of ${fmt(rows.length)})`);
      timeTravel.showWindow(Number(entry.revision));
    },
    viewAt: (revision) => {
      view = revision;
      sayMarks();
      [...list.children].forEach((item, i) => {
        const entry = rows[start + i];
        if (entry) applyView(/** @type {HTMLElement} */ (item), entry);
      });
    },
  };
}

/**
 * Where "Go to revision" `asked` goes on a timeline of `rows` (in revision order), and what its
 * status says: the first row at or after `asked` (`went to revision 230`, or, when `asked` has no
 * row of its own, such as a decision's `EventsArchived`, `revision 12 has no row: went to revision
 * 13, the next one`); past the last row, no row (`index` undefined): `revision 99999 is past the
 * end of this timeline (its last row is revision 262)`. Before `lifeStart`, the first revision of
 * a session id written again after an erasure, the revision was erased: `revision 5 was erased
 * (revisions 0–27, an earlier life of this session id): went to revision 28, the first of this
 * life` (newcomer ncui69 F9: it said "has no row"); of an id erased more than once, the erased life
 * that held it ({@link erasedLifeText}): `revision 5 was erased (revisions 0–26, an earlier life of
 * this session id, erased 2026-12-07 02:50:41.355 UTC): went to revision 59, the first of this life`.
 * @param {LogEntry[]} rows
 * @param {bigint} asked
 * @param {number} [lifeStart] the log's first revision (0, or after an erasure of the id, the first one written again)
 * @param {Schemas['Erasure'][]} [erasures] the id's erasure records before `lifeStart` ({@link ErasedLives})
 * @returns {{ index: number | undefined, text: string }}
 */
function revisionTarget(rows, asked, lifeStart = 0, erasures = []) {
  const index = firstRowFrom(rows, Number(asked));
  const row = rows[index];
  if (row === undefined) {
    const last = rows.at(-1);
    return {
      index: undefined,
      text: `revision ${asked} is past the end of this timeline${last ? ` (its last row is revision ${last.revision})` : ''}: no row marked`,
    };
  }
  const text =
    BigInt(row.revision) === asked
      ? `went to revision ${asked}`
      : asked < BigInt(lifeStart)
        ? `revision ${asked} was erased (${erasedLifeText(erasures, asked, lifeStart)}): went to revision ${row.revision}, the first of this life`
        : `revision ${asked} has no row: went to revision ${row.revision}, the next one`;
  return { index, text: `${text} (row ${fmt(index + 1)} of ${fmt(rows.length)})` };
}

/**
 * The erased life of a session id that held revision `asked` (before `lifeStart`, where its
 * current life starts), for "Go to revision": from the erasure record whose revisions hold it,
 * `revisions 0–26, an earlier life of this session id, erased 2026-12-07 02:50:41.355 UTC` (of an
 * id erased twice, revisions 0–58 were two lives: newcomer ncaudit72 F1). With one erased life (its
 * record's revisions are all of 0 to `lifeStart` − 1), or no record naming revisions that hold it
 * (not found among the latest erasures, unread, or written before records named their revisions):
 * `revisions 0–58, an earlier life of this session id`.
 * @param {Schemas['Erasure'][]} erasures @param {bigint} asked @param {number} lifeStart
 * @returns {string}
 */
function erasedLifeText(erasures, asked, lifeStart) {
  for (const e of erasures) {
    if (e.firstRevision === null || e.lastRevision === null || asked < BigInt(e.firstRevision) || asked > BigInt(e.lastRevision)) continue;
    // the only erased life: named as before, by the revisions before this life
    if (e.firstRevision === '0' && BigInt(e.lastRevision) === BigInt(lifeStart) - 1n) break;
    return `revisions ${e.firstRevision}–${e.lastRevision}, an earlier life of this session id, erased ${utcText(e.erasedAt) ?? revealedText(e.erasedAt)}`;
  }
  return `revisions 0–${lifeStart - 1}, an earlier life of this session id`;
}

/**
 * Who ordered a commanded compaction, an erasure or a policy, in words, from its `requestedBy` (never the key itself): the
 * transport, the API key's label and the request's id with who chose it, e.g. `over HTTP, key
 * API_KEYS#2, request id ops-4711 (the client's X-Request-Id)`, `over HTTP, no API key (open
 * mode), request id 5f0c9a1e-… (made by the service)`, `over NATS, key API_KEYS#1, command id
 * acme:c-9`. The label and the id are stored text ({@link stored}): a client chooses its own id.
 * @param {Schemas['RequestedBy']} r
 * @returns {Array<Node | string>}
 */
function requestedByParts(r) {
  /** @type {Array<Node | string>} */
  const parts = [r.via === 'nats' ? 'over NATS, ' : 'over HTTP, '];
  parts.push(...(r.keyLabel === undefined ? ['no API key (open mode)'] : ['key ', stored(r.keyLabel)]));
  if (r.requestId !== undefined) {
    parts.push(r.via === 'nats' ? ', command id ' : ', request id ', stored(r.requestId));
    if (r.requestIdFrom === 'client') parts.push(" (the client's X-Request-Id)");
    else if (r.requestIdFrom === 'service') parts.push(' (made by the service)');
  }
  return parts;
}

/**
 * What a compaction's "based on revision" means, beside its number: the revision whose window the
 * pass planned on (what its strategy and summarizer were given, the API's `basedOnRevision`), and,
 * when the diff's Before is later (`before`, the revision just before the decision's first event),
 * that the revisions between were written while the pass ran and it was re-based onto them: its
 * plan still held, so it was written after them without a second summarizer call, the events they
 * appended kept as they were (README "tokensBefore"; DESIGN §4). E.g. `18: the pass planned on the
 * window at revision 18 (…); revisions 19–22 were written while it ran: …`.
 * @param {string} basedOn the item's `basedOnRevision` @param {string} before the diff's `before.revision`
 * @returns {string}
 */
function basedOnText(basedOn, before) {
  const planned = `${basedOn}: the pass planned on the window at revision ${basedOn} (what its strategy and summarizer were given)`;
  const from = BigInt(basedOn) + 1n;
  const to = BigInt(before);
  if (to < from) return `${planned}, the Before below`;
  const written = to === from ? `revision ${to} was written` : `revisions ${from}–${to} were written`;
  return (
    `${planned}; ${written} while it ran: its plan still held, so it was re-based onto ${to === from ? 'it' : 'them'} (no second summarizer call) ` +
    `and the events appended meanwhile were kept as they were. Before (revision ${before}) is the window it replaced, with those events (marked "appended meanwhile")`
  );
}

/**
 * Which version of the session's stored policy a pass applied, for its details ("policy"), from
 * its history item's `from` and `policyRevision`: the revision as a link to the policy event's row
 * on the timeline ({@link revisionHref}), then what kind of pass applied it: `revision 21 of the
 * stored policy (automatic pass)`, `revision 21 of the stored policy (commanded without a strategy:
 * its strategy, trigger and estimator applied)`. A command by the policy whose revision was not
 * known says so; undefined (no row) for a pass that named its strategy (`from` `request`) and
 * for an automatic pass recorded before passes kept the revision (2026-12-05).
 * @param {string} sessionId @param {CompactionItem} item
 * @returns {Array<Node | string> | undefined}
 */
function policyParts(sessionId, item) {
  if (item.from !== 'policy') return undefined;
  const how = item.origin === 'auto' ? 'automatic pass' : 'commanded without a strategy: its strategy, trigger and estimator applied';
  if (item.policyRevision === null) return item.origin === 'auto' ? undefined : [`the stored policy, its revision not recorded (${how})`];
  const revision = item.policyRevision;
  return [
    h(
      'a',
      {
        href: revisionHref(sessionId, revision),
        class: 'policy-revision',
        'aria-label': `revision ${revision}: go to the policy event on the timeline`,
      },
      `revision ${revision}`,
    ),
    ` of the stored policy (${how})`,
  ];
}

/**
 * A compaction's summarizer figures for its details: the model and {@link spendText}, the part
 * discarded after `; of which discarded:`. The extractive summarizer (`kind` `extractive`, no
 * model: each of its "calls" counts 0 tokens) reads `extractive (no model, extractive-v1): no
 * tokens spent`, not `1 call, 0 prompt + 0 completion tokens reported`, which read as missing usage.
 * @param {NonNullable<CompactionItem['summarizer']>} summarizer
 * @returns {Array<Node | string>}
 */
function summarizerParts(summarizer) {
  const { usage } = summarizer;
  if (summarizer.kind === 'extractive' && usage.promptTokens === 0 && usage.completionTokens === 0)
    return ['extractive (no model, ', stored(summarizer.model), '): no tokens spent'];
  return [
    stored(summarizer.model),
    `: ${spendText(summarizer)}`,
    // calls whose replies the pass did not use (planned again): part of the figures before
    summarizer.discarded ? `; of which discarded: ${spendText(summarizer.discarded)}` : '',
  ];
}

/**
 * A compaction's details panel (`#diff`): its heading `#diff-heading` (focusable by script, where
 * the keyboard lands when the panel opens) beside the `close` button, its facts, summary, failure,
 * before/after columns and late answers archived on arrival.
 * An event it archived as a superseded system message says so ({@link SUPERSEDED_WHY}), and so does "saved";
 * each archived event of Before carries its reason's tag ({@link archiveReasons}, `data-reason`), and a
 * failed pass what it had planned ({@link plannedText}).
 * @param {string} sessionId @param {CompactionDiff} diff @param {CompactionItem | undefined} item @param {HTMLElement} close
 * @param {ReadonlyMap<string, LogEntry>} events the page's log entries by event id
 */
function diffView(sessionId, diff, item, close, events) {
  const policy = item === undefined ? undefined : policyParts(sessionId, item);
  const reasons = archiveReasons(item ?? { archivedIds: diff.archivedIds }, events);
  const superseded = (item?.archivedIds ?? diff.archivedIds).filter((id) => reasons.get(id) === 'supersededSystem');
  /** Events written after the revision the pass planned on (appended while it ran: it was re-based onto them). */
  const planned = item === undefined ? undefined : BigInt(item.basedOnRevision);
  /** @param {string} title @param {CompactionDiff['before']} side */
  const column = (title, side) =>
    h(
      'div',
      {},
      h('h2', {}, `${title}: ${fmt(side.tokens)} ${diff.estimator}, ${side.events.length} events (revision ${side.revision})`),
      h(
        'ol',
        // A scroll box: a named Tab stop, so the keyboard can scroll it.
        { tabindex: '0', 'aria-label': `${title}: the window's events` },
        side.events.map((e) => {
          const reason = e.change === 'archived' ? reasons.get(e.id) : undefined;
          const replaced = reason === 'supersededSystem';
          return h(
            'li',
            { class: e.change === 'kept' ? '' : e.change, 'data-event': e.id, 'data-change': e.change, 'data-reason': reason },
            // A notice reads as one here too (newcomer ncrecheck70 F7: it read "system", the timeline NOTICE).
            kindLabel(
              { type: e.type, notice: /** @type {any} */ (events.get(e.id)?.data)?.event?.notice === true },
              replaced ? 'superseded' : undefined,
              replaced ? 'archived' : undefined,
            ),
            h('span', { class: 'muted' }, stored(e.id), ` · ${fmt(e.tokens)} ${diff.estimator}`),
            e.change !== 'kept' ? h('span', { class: `badge ${e.change}` }, e.change) : null,
            reason ? h('span', { class: 'badge reason', title: ARCHIVE_REASONS[reason].title }, ARCHIVE_REASONS[reason].tag) : null,
            replaced ? h('span', { class: 'muted superseded-note' }, ` ${SUPERSEDED_WHY}`) : null,
            planned !== undefined && title === 'Before' && BigInt(e.revision) > planned
              ? h(
                  'span',
                  { class: 'badge meanwhile', title: `appended after revision ${planned}, while the pass ran: not in the window it planned on` },
                  'appended meanwhile',
                )
              : null,
            stored(e.preview, 'div', { class: 'preview' }),
          );
        }),
      ),
    );
  return h(
    'section',
    { class: 'panel', id: 'diff', 'data-compaction': diff.compactionId, 'aria-labelledby': 'diff-heading' },
    h('div', { id: 'diff-panel-head' }, h('h2', { id: 'diff-heading', tabindex: '-1' }, 'Compaction ', stored(diff.compactionId)), close),
    item
      ? h(
          'dl',
          { class: 'facts' },
          h('div', {}, h('dt', {}, 'outcome'), h('dd', {}, item.reason ? `${item.outcome} (${item.reason})` : item.outcome)),
          // an open-tool-call noop: the call whose turn held the cut back (DESIGN §3.6)
          item.toolCallId
            ? h(
                'div',
                {},
                h('dt', {}, 'held back by'),
                h('dd', { id: 'held-back-by' }, 'tool call ', stored(item.toolCallId), ' in event ', stored(item.eventId ?? '')),
              )
            : null,
          item.triggerStillFires !== null
            ? h(
                'div',
                {},
                h('dt', {}, 'trigger after'),
                h(
                  'dd',
                  { id: 'trigger-after', title: item.triggerStillFires ? stillFiresTitle : quietTitle },
                  item.triggerStillFires ? 'still fires' : 'no longer fires',
                ),
              )
            : null,
          h('div', {}, h('dt', {}, 'origin'), h('dd', {}, item.origin)),
          // who ordered a commanded pass; an automatic one's trigger says why
          item.origin === 'command'
            ? h(
                'div',
                {},
                h('dt', {}, 'requested by'),
                h('dd', { id: 'requested-by' }, item.requestedBy ? requestedByParts(item.requestedBy) : 'not recorded (decided before requests were recorded)'),
              )
            : null,
          // which version of the stored policy the pass applied (none for a pass that named its strategy)
          policy ? h('div', {}, h('dt', {}, 'policy'), h('dd', { id: 'policy-applied' }, policy)) : null,
          h('div', {}, h('dt', {}, 'strategy'), h('dd', { title: revealedText(JSON.stringify(item.strategy, null, 1)) }, brief(item.strategy))),
          h('div', {}, h('dt', {}, 'trigger'), h('dd', {}, item.trigger ? brief(item.trigger) : 'always')),
          // the summarizer's instructions the pass was given, when the strategy set its own (newcomer ncaudit64 F5)
          ...promptRows(item.strategy, item.summarizer?.kind === 'extractive'),
          h('div', {}, h('dt', {}, 'based on revision'), h('dd', { id: 'based-on' }, basedOnText(item.basedOnRevision, diff.before.revision))),
          h('div', {}, h('dt', {}, 'saved'), h('dd', { id: 'saved' }, savedText(item, diff, superseded))),
          item.summarizer ? h('div', {}, h('dt', {}, 'summarizer'), h('dd', { id: 'summarizer-figures' }, summarizerParts(item.summarizer))) : null,
          // the models the replies named; the extractive summarizer has no model and no replies
          item.summarizer && item.summarizer.kind !== 'extractive'
            ? h(
                'div',
                {},
                h('dt', {}, 'answered by'),
                h(
                  'dd',
                  { id: 'answered-models', title: 'the models the endpoint named in its replies (the configured one is sent)' },
                  item.summarizer.answeredModels.length
                    ? item.summarizer.answeredModels.flatMap((m, i) => (i ? [', ', stored(m)] : [stored(m)]))
                    : 'no model named by the replies',
                ),
              )
            : null,
          item.summaryBudget
            ? h(
                'div',
                {},
                h('dt', {}, 'summary budget'),
                h(
                  'dd',
                  { id: 'summary-budget' },
                  `summary ${fmt(item.summaryBudget.summaryTokens)} of ${fmt(item.summaryBudget.tokens)} ${diff.estimator}`,
                  item.summaryBudget.exceeded
                    ? [
                        ' ',
                        h('span', { class: 'badge archived' }, `over budget${item.summaryBudget.overBudget ? `, ${item.summaryBudget.overBudget} whole` : ''}`),
                      ]
                    : ', within',
                ),
              )
            : null,
          // a failure's duration runs to the failure; null only on a failure recorded before failures carried it
          h(
            'div',
            {},
            h('dt', {}, 'duration'),
            h(
              'dd',
              {},
              item.durationMs === null
                ? 'not recorded (a failure recorded before failures carried it)'
                : `${fmt(item.durationMs)} ms${item.failure ? ' until it failed' : ''}`,
            ),
          ),
          // the store's clock, as the timeline and "Go to time" (not `at`, the deciding replica's, read before the append)
          h('div', {}, h('dt', { title: RECORDED_TITLE }, 'recorded (store time)'), h('dd', { id: 'compaction-recorded' }, compactionTime(item))),
        )
      : null,
    item?.summary
      ? h(
          'div',
          // A scroll box: a named region and a Tab stop, so the keyboard can scroll it.
          { class: 'summary-text', id: 'summary-text', role: 'region', tabindex: '0', 'aria-labelledby': 'summary-label' },
          h('strong', { id: 'summary-label' }, 'Summary ', stored(item.summary.id), ` (${coversText(item.summary.coveredIds, diff, reasons)}):`),
          notSummarized(item, events),
          stored(item.summary.text, 'div'),
        )
      : null,
    item?.failure
      ? h(
          'p',
          { class: 'error' },
          `Failed at ${item.failure.stage}${item.failure.failureKind ? ` (${item.failure.failureKind})` : ''}: `,
          stored(item.failure.reason),
        )
      : null,
    item ? plannedText(item, superseded) : null,
    h('div', { class: 'diff' }, column('Before', diff.before), column('After', diff.after)),
    diff.archivedOnArrival.length
      ? h(
          'div',
          { id: 'archived-on-arrival' },
          h('h2', {}, `Archived on arrival later (${diff.archivedOnArrival.length}): late answers to calls this compaction archived`),
          h(
            'ol',
            {},
            diff.archivedOnArrival.map((a) =>
              h(
                'li',
                { class: 'archived', 'data-event': a.eventId },
                stored(a.eventId),
                h('span', { class: 'muted' }, ` at revision ${a.revision}, `, timeOf(a.at, 'archived on arrival at')),
              ),
            ),
          ),
        )
      : null,
  );
}

// ---- window at a revision ---------------------------------------------------------------------

/** The two renderings of a window the "Window at revision" panel shows (the API's `format`). */
/** @typedef {'events' | 'openai'} WindowFormat */

/**
 * The "Window at revision" panel on screen: its node (`#window-at`); `showAt(revision, window)`,
 * which shows the window right after `revision` (reading it from the service's time travel,
 * `GET …/window?atRevision=`, unless `window` is that answer already, in the events format);
 * `clear()`, which empties it.
 * @typedef {{
 *   node: HTMLElement,
 *   showAt: (revision: number, window?: Schemas['Window'], resolved?: ResolvedTime) => void,
 *   clear: () => void,
 * }} WindowAt
 */

/**
 * The text of an OpenAI message's `content`: the string, or its text parts joined; '' for null.
 * @param {Schemas['OpenAiMessage']['content']} content
 * @returns {string}
 */
function contentText(content) {
  if (content === null || content === undefined) return '';
  return typeof content === 'string' ? content : content.map((part) => part.text).join('');
}

/**
 * One event of a window in the native shape (`format=events`): `<li data-event>` with its type,
 * id, revision, cost in `estimator`, when it was created (the API's `createdAt`: the client's
 * time when it sent one, else when the store recorded it), its text, tool calls or tool results;
 * a summary marked `summary` with a link to the compaction that wrote it; a notice, the pinned and a superseded
 * system message named so ({@link kindLabel}).
 * @param {Schemas['WindowEvent']} event @param {Schemas['Estimator']} estimator
 * @param {(id: string) => string} compactionHref the link that selects a compaction
 * @param {'pinned' | 'superseded'} [role] a stored system message's role in the window ({@link systemRoles})
 * @returns {HTMLElement}
 */
function windowEventRow(event, estimator, compactionHref, role) {
  const e = /** @type {any} */ (event);
  /** @type {Array<Node | string>} */
  const body = [];
  if (e.type === 'tool') for (const r of e.responses ?? []) body.push(h('div', {}, stored(r.name), ': ', wholeOnRequest(r.data)));
  else {
    if (e.text) body.push(wholeOnRequest(e.text, 'div'));
    if (e.refusal) body.push(h('div', {}, 'refusal: ', wholeOnRequest(e.refusal)));
    for (const c of e.toolCalls ?? []) body.push(h('div', {}, '→ ', stored(c.name), '(', wholeOnRequest(c.arguments), ')'));
  }
  return h(
    'li',
    { class: e.type === 'summary' ? 'summary' : '', 'data-event': e.id },
    h('span', { class: 'muted' }, `#${e.revision} `),
    kindLabel(e, role),
    h(
      'span',
      { class: 'muted' },
      stored(e.id),
      ` · ${fmt(e.tokens)} ${estimator} · ${e.type === 'summary' ? 'summarized' : 'created'} `,
      timeOf(e.createdAt, e.type === 'summary' ? SUMMARIZED_LABEL : CREATED_LABEL),
      ' ',
    ),
    e.type === 'summary' && e.compactionId
      ? h(
          'a',
          {
            href: compactionHref(e.compactionId),
            'aria-label': `written by ${revealedText(short(e.compactionId))}, compaction ${revealedText(e.compactionId)}`,
          },
          'written by ',
          stored(short(e.compactionId)),
        )
      : null,
    h('div', { class: 'preview' }, body),
  );
}

/** What a window event's or recall hit's `createdAt` is, for its tooltip (the API's definition). */
const CREATED_LABEL = "createdAt: the client's time when it sent one, else when the store recorded the event";
/** A summary's `createdAt`: the time of the compaction that wrote it, not the store's (docs/reliability.md, Clock jumps). */
const SUMMARIZED_LABEL =
  "createdAt of a summary: the compaction's time, the deciding replica's clock just before the store recorded it (its log row has the store's recordedAt)";

/**
 * One message of a window in the OpenAI shape (`format=openai`, what the model receives):
 * `<li data-role>` with its role (and `name`), its content, an assistant's `tool_calls` (name,
 * arguments, id) and refusal, a tool message's `tool_call_id`.
 * @param {Schemas['OpenAiMessage']} message @param {number} index its place among the messages (0-based)
 * @returns {HTMLElement}
 */
function openAiMessageRow(message, index) {
  const m = /** @type {any} */ (message);
  return h(
    'li',
    { class: m.role === 'system' ? 'decision' : '', 'data-role': m.role },
    h('span', { class: 'muted' }, `${index + 1}. `),
    h('span', { class: 'kind' }, m.role),
    m.name !== undefined ? h('span', { class: 'muted' }, 'name ', stored(m.name), ' ') : null,
    m.role === 'tool' ? h('span', { class: 'muted' }, 'answers call ', stored(m.tool_call_id)) : null,
    h(
      'div',
      { class: 'preview' },
      m.content === null ? null : wholeOnRequest(contentText(m.content), 'div'),
      m.refusal ? h('div', {}, 'refusal: ', wholeOnRequest(m.refusal)) : null,
      (m.tool_calls ?? []).map((/** @type {any} */ c) =>
        h('div', {}, '→ ', stored(c.function?.name), '(', wholeOnRequest(c.function?.arguments), ') ', h('span', { class: 'muted' }, 'call ', stored(c.id))),
      ),
    ),
  );
}

/**
 * The "Window at revision" panel (`#window-at`, its heading `#window-at-heading`): what the model
 * was sent right after a revision gone to ("Go to revision", "Go to time", a recall hit's row),
 * read from the service's time travel (`GET …/window?atRevision=N&estimator=…`, docs/http-api.md "Time
 * travel"), in one of two renderings chosen by radio buttons (`Show as`): the window's events as
 * stored (`format=events`: each event, summaries in their place with the compaction that wrote
 * them) or the OpenAI messages the model receives (`format=openai`: the system message first, a
 * summary as its shadow prompt's `user` message and the summary's `assistant` message, tool calls
 * and results), each read once per revision. Its status (`#window-at-status`, a live region) names
 * the revision shown, the time "Go to time" resolved to (the store's recorded time), how many
 * events or messages and their cost in `estimator`; a revision inside a decision shows the window
 * after it, and the status says so. `onShown(revision)` is called with the revision whose window
 * is on screen (undefined: none), so the timeline marks what was archived then. Only the latest
 * revision asked counts; an error shows in the panel. `onOpen(open)` is called when the panel opens
 * (a revision asked: its window, its reading or its error shown, with Close) and when it closes.
 * @param {string} path the session's route
 * @param {Schemas['Estimator']} estimator the unit of the costs
 * @param {(id: string) => string} compactionHref the link that selects a compaction
 * @param {(revision: number | undefined) => void} onShown
 * @param {(open: boolean) => void} [onOpen]
 * @returns {WindowAt}
 */
function windowAtPanel(path, estimator, compactionHref, onShown, onOpen = () => {}) {
  /** @type {WindowFormat} */
  let format = 'events';
  /** @type {number | undefined} the revision asked (undefined: none) */
  let asked;
  /** @type {ResolvedTime | undefined} the event "Go to time" resolved to, for the revision asked */
  let resolvedTime;
  /** @type {Map<WindowFormat, Schemas['Window']>} the answers for the revision asked */
  let answers = new Map();
  /** Reads started: an answer for an older one is dropped. */
  let reads = 0;
  const heading = h('h2', { id: 'window-at-heading', tabindex: '-1' }, 'Window at a revision');
  const status = h('p', { id: 'window-at-status', role: 'status' });
  // A scroll box, a Tab stop only while it shows a window (newcomer ncaudit72 F7: empty, it was a stop showing nothing).
  const list = h('ol', { class: 'timeline', id: 'window-at-list', 'aria-label': 'Window at a revision: nothing shown' });
  const intro = h(
    'p',
    { class: 'muted', id: 'window-at-intro' },
    'What the model was sent right after a revision: use "Go to revision" or "Go to time" on the timeline, or a recall hit\'s row link. It is read from the service\'s time travel, as stored or as the OpenAI messages the model receives.',
  );
  /** @param {WindowFormat} value @param {string} label */
  const radio = (value, label) => {
    const input = /** @type {HTMLInputElement} */ (
      h('input', { type: 'radio', name: 'window-format', value, checked: value === format, onchange: () => choose(value) })
    );
    return h('label', {}, input, ` ${label}`);
  };
  const choice = h(
    'fieldset',
    { class: 'inline', id: 'window-at-format', hidden: true },
    h('legend', {}, 'Show as'),
    radio('events', 'events as stored'),
    radio('openai', 'OpenAI messages (what the model receives)'),
  );
  const close = h('button', { type: 'button', id: 'window-at-close', hidden: true, onclick: () => clear() }, 'Close');
  /** @param {WindowFormat} value */
  const choose = (value) => {
    format = value;
    if (asked !== undefined) void read();
  };
  const clear = () => {
    reads++;
    asked = undefined;
    answers = new Map();
    heading.textContent = 'Window at a revision';
    status.textContent = '';
    list.replaceChildren();
    list.removeAttribute('tabindex');
    list.setAttribute('aria-label', 'Window at a revision: nothing shown');
    choice.hidden = true;
    close.hidden = true;
    intro.hidden = false;
    onShown(undefined);
    onOpen(false);
  };
  /** Shows the answer for the revision asked in the chosen format. @param {Schemas['Window']} window */
  const draw = (window) => {
    const w = /** @type {any} */ (window);
    const items = format === 'openai' ? (w.messages ?? []) : (w.events ?? []);
    const what = format === 'openai' ? counted(items.length, 'OpenAI message') : `${counted(items.length, 'event')} (summaries included)`;
    const roles = format === 'openai' ? [] : systemRoles(items);
    heading.textContent = `Window at revision ${window.revision}`;
    list.setAttribute('aria-label', `Window at revision ${window.revision}: ${format === 'openai' ? 'the OpenAI messages' : 'its events'}`);
    const inside = asked !== undefined && Number(window.revision) !== asked;
    status.replaceChildren(
      `Right after revision ${window.revision}`,
      inside ? ` (revision ${asked} is inside a decision: the window after the whole decision, as the service's time travel answers)` : '',
      ...(resolvedTime
        ? [', the time gone to resolved to revision ', resolvedTime.revision, ', recorded (store time) ', timeOf(resolvedTime.recordedAt, 'recorded')]
        : []),
      `: ${what}, ${fmt(window.tokens)} ${window.estimator}`,
      format === 'openai' ? ' (the cost of the messages)' : '',
      '.',
    );
    fill(
      list,
      format === 'openai'
        ? items.map((/** @type {Schemas['OpenAiMessage']} */ m, /** @type {number} */ i) => openAiMessageRow(m, i))
        : items.map((/** @type {Schemas['WindowEvent']} */ e, /** @type {number} */ i) => windowEventRow(e, window.estimator, compactionHref, roles[i])),
    );
    if (items.length === 0) list.append(h('li', { class: 'muted' }, 'the window was empty'));
    list.setAttribute('tabindex', '0');
    choice.hidden = false;
    close.hidden = false;
    intro.hidden = true;
    onShown(Number(window.revision));
  };
  /** Reads (once) and shows the window at the revision asked in the chosen format. */
  const read = async () => {
    const turn = ++reads;
    const revision = asked;
    if (revision === undefined) return;
    const known = answers.get(format);
    if (known) return draw(known);
    status.textContent = `reading the window at revision ${revision}…`;
    const wanted = format;
    try {
      /** @type {Schemas['Window']} */
      const window = await api(`${path}/window?atRevision=${revision}&estimator=${estimator}${wanted === 'openai' ? '&format=openai' : ''}`);
      if (turn !== reads || !list.isConnected) return;
      answers.set(wanted, window);
      draw(window);
    } catch (err) {
      if (turn !== reads || !list.isConnected) return;
      if (err instanceof NeedsKey) return showKeyPrompt(err.message);
      heading.textContent = `Window at revision ${revision}`;
      list.replaceChildren();
      list.removeAttribute('tabindex');
      status.replaceChildren(errorBox(`The window at revision ${revision} could not be read`, err, () => void read()));
      close.hidden = false;
      onShown(undefined);
    }
  };
  const node = h(
    'section',
    { class: 'panel', id: 'window-at', 'aria-labelledby': 'window-at-heading' },
    h('div', { class: 'panel-head' }, heading, close),
    intro,
    choice,
    status,
    list,
  );
  return {
    node,
    showAt: (revision, window, resolved) => {
      asked = revision;
      onOpen(true);
      resolvedTime = resolved;
      answers = new Map();
      // The events answer of "Go to time" (`atTime` is the `atRevision` of the event it resolved to) is kept.
      if (window && 'events' in window && window.estimator === estimator) answers.set('events', window);
      void read();
    },
    clear,
  };
}

/** Recall hits read per page (the API answers at most 100). */
const RECALL_PAGE = 20;

/**
 * What the session page knows of one of its events, for a recall hit in that session: its
 * revision, whether its client gave a `createdAt` (`clientTime`), and for a summary the compaction
 * that wrote it.
 * @typedef {{ revision: string, clientTime: boolean, compactionId?: string }} KnownEvent
 */

/**
 * The link of an event's row on its session's timeline: `#/s/<sessionId>/e/<eventId>`.
 * @param {string} sessionId @param {string} eventId
 */
const eventHref = (sessionId, eventId) => `${sessionHref(sessionId)}/e/${encodeURIComponent(eventId)}`;

/**
 * The link of a revision's row on a session's timeline, `#/s/<sessionId>/r/<revision>`: the page
 * goes there as "Go to revision" does (a row without an event id, such as a policy event's).
 * @param {string} sessionId @param {string} revision a decimal revision
 */
const revisionHref = (sessionId, revision) => `${sessionHref(sessionId)}/r/${revision}`;

/**
 * What a row link goes to on its session's timeline: an event ({@link eventHref}) or a revision
 * ({@link revisionHref}).
 * @typedef {{ eventId: string } | { revision: bigint }} RowLink
 */

/** @typedef {RecallPage['items'][number]} RecallHit */

/**
 * Reads the session page again and goes to event `eventId` on its timeline (an event written after
 * the page was read): its link ({@link eventHref}) becomes the page's, without a second read.
 * @param {string} sessionId @param {string} eventId
 */
function readAgainAtEvent(sessionId, eventId) {
  const href = eventHref(sessionId, eventId);
  if (location.hash !== href) history.pushState(null, '', href);
  void render(true);
}

/**
 * A recall hit's link to its row on its session's timeline ({@link eventHref}): `revision 12`
 * when the hit is in the session on screen (its revision known); a hit in the session on screen
 * the page does not know, written after the page was read, `written after the page was read: read
 * again and go to it`, which does so ({@link readAgainAtEvent}; newcomer ncui69 F8); else `its
 * row`. Followed to the link already in the address bar (no hashchange), it goes there again.
 * @param {RecallHit} hit @param {((eventId: string) => KnownEvent | undefined) | undefined} known
 * @param {string | undefined} onScreen the session page's session (undefined: the session list)
 */
function hitRowLink(hit, known, onScreen) {
  const event = known?.(hit.eventId);
  const late = event === undefined && onScreen !== undefined && hit.sessionId === onScreen;
  const href = eventHref(hit.sessionId, hit.eventId);
  const label = event ? `revision ${event.revision}` : late ? 'written after the page was read: read again and go to it' : 'its row';
  return h(
    'a',
    {
      class: late ? 'row-link written-after' : 'row-link',
      href,
      'aria-label': `${label}: ${late ? '' : 'go to '}event ${revealedText(hit.eventId)} on the timeline of ${revealedText(hit.sessionId)}`,
      onclick: (e) => {
        if (late) {
          e.preventDefault();
          return readAgainAtEvent(hit.sessionId, hit.eventId);
        }
        if (location.hash !== href) return;
        e.preventDefault();
        void render();
      },
    },
    label,
  );
}

/**
 * A recall hit's time, its clock named: the API's `createdAt` is the client's time when it sent
 * one, else when the store recorded the event, and a summary's is its compaction's (`summarized …`,
 * {@link SUMMARIZED_LABEL}). For a hit in the session on screen the page knows
 * which (`client time …` or `recorded …`); otherwise `created (client's time, else recorded) …`.
 * @param {RecallHit} hit @param {((eventId: string) => KnownEvent | undefined) | undefined} known
 * @returns {Array<Node | string>}
 */
function hitTime(hit, known) {
  // A summary's time is its compaction's (the deciding replica's clock), neither a client's nor the store's (newcomer ncaudit64 F2).
  if (hit.type === 'summary') return ['summarized ', timeOf(hit.createdAt, SUMMARIZED_LABEL, 'when')];
  const event = known?.(hit.eventId);
  if (event === undefined) return ["created (client's time, else recorded) ", timeOf(hit.createdAt, CREATED_LABEL, 'when')];
  return event.clientTime
    ? ['client time ', timeOf(hit.createdAt, "the client's createdAt", 'when client-time')]
    : ['recorded ', timeOf(hit.createdAt, 'recorded (the client gave no createdAt)', 'when recorded')];
}

/** A compaction's summary id (`summaryIdFor`): `summary-<compaction id>[-<n>]`, the compaction id captured. */
const SUMMARY_ID = /^summary-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:-[1-9][0-9]*)?$/i;

/**
 * A summary hit's link to the compaction that wrote it (`written by <short id>`, its details in
 * the hit's session): the compaction the session page's log names, else the one its id names (a
 * summary's id is `summary-<compaction id>`, or `summary-<compaction id>-<n>` when an event of the
 * session had that id: `summaryIdFor`); null for other hits.
 * @param {RecallHit} hit @param {((eventId: string) => KnownEvent | undefined) | undefined} known
 */
function hitWriter(hit, known) {
  if (hit.type !== 'summary') return null;
  const id = known?.(hit.eventId)?.compactionId ?? SUMMARY_ID.exec(hit.eventId)?.[1]?.toLowerCase();
  if (!id) return null;
  return h(
    'a',
    {
      class: 'badge added written-by',
      href: `${sessionHref(hit.sessionId)}/c/${encodeURIComponent(id)}`,
      'aria-label': `written by ${revealedText(short(id))}, compaction ${revealedText(id)}: open its details`,
    },
    'written by ',
    stored(short(id)),
  );
}

/** Recall's `type` filter choices (the event kinds, docs/http-api.md "Recall"), the first none. */
const RECALL_KINDS = ['', 'user', 'assistant', 'tool', 'system', 'summary'];

/**
 * What a recall search was limited to, in words, for its status: `in this session only`, `in
 * every session`, and its filters: `, summaries only`, `, archived only`, `, in the window only`.
 * @param {URLSearchParams} query the search as sent
 */
function recallScope(query) {
  const parts = [query.has('sessionId') ? 'in this session only' : 'in every session'];
  const type = query.get('type');
  if (type) parts.push(type === 'summary' ? 'summaries only' : `${type} events only`);
  if (query.get('archived') === 'true') parts.push('archived only');
  if (query.get('archived') === 'false') parts.push('in the window only');
  return parts.join(', ');
}

/**
 * The recall box: a search over everything (this session only when ticked), its hits in pages of
 * {@link RECALL_PAGE} with a "More hits" button while the API gives a `nextCursor` (the next page of
 * the same search: its words and filters as they were sent), the first mention (with "this session
 * only", the API answers it first) marked, an archived hit's "archived by" a link to that
 * compaction's details in the hit's session. A next page refused because another release of the
 * service made its cursor (400 `cursor_expired`: the service was upgraded, or rolled back, between
 * the pages) reads the same search again from its first page ({@link pageOrRestart}), replacing
 * the hits on screen, and the status line says so; other refusals show in the results with Retry when it can help. Only
 * the latest search counts: a new one drops the answers of earlier ones, and of their pages; so
 * does a page no longer on screen.
 *
 * On a session page (`sessionId` given) "this session only" is ticked at first, and the line
 * `#recall-scope` says what the next search covers (this session only, or every session of the
 * tenant) as the box is ticked or not; on the session list (no `sessionId`) it searches every
 * session (`GET /v1/recall` without `sessionId`). Two filters of recall go with every search:
 * the kind (`type`: user, assistant, tool, system or summary; "summaries only" answers "is the fact
 * in a summary?") and archived or not (`archived=true` / `false`). The status names what was
 * searched (`3 hits, all shown (searched in this session only, summaries only)`; `no hit
 * (searched in this session only): untick "this session only" to search every session`).
 * Each hit links to its session, to its row on that session's timeline (`#/s/<id>/e/<eventId>`:
 * the timeline goes to it and "Window at revision" opens there; named by its revision when the hit
 * is in the session on screen), a summary to the compaction that wrote it, and says which clock
 * its time is ({@link hitTime}).
 * @param {string} [sessionId] the session page's session (undefined: the session list's box)
 * @param {(eventId: string) => KnownEvent | undefined} [known] the session page's events, by id
 */
function recallBox(sessionId, known) {
  const input = /** @type {HTMLInputElement} */ (
    h('input', { type: 'search', name: 'recall', placeholder: 'words to find, archived included', 'aria-label': 'Words to find (archived events included)' })
  );
  const only = /** @type {HTMLInputElement} */ (
    h('input', { type: 'checkbox', name: 'thisSession', checked: sessionId !== undefined, onchange: () => sayScope() })
  );
  const kind = /** @type {HTMLSelectElement} */ (
    h(
      'select',
      { name: 'type', id: 'recall-type' },
      RECALL_KINDS.map((k) => h('option', { value: k }, k === '' ? 'any kind' : k === 'summary' ? 'summaries only' : `${k} only`)),
    )
  );
  const archived = /** @type {HTMLSelectElement} */ (
    h(
      'select',
      { name: 'archived', id: 'recall-archived' },
      h('option', { value: '' }, 'archived or not'),
      h('option', { value: 'true' }, 'archived only'),
      h('option', { value: 'false' }, 'in the window only'),
    )
  );
  const scope = h('p', { class: 'muted', id: 'recall-scope' });
  const sayScope = () => {
    scope.textContent =
      sessionId !== undefined && only.checked
        ? 'Searches this session only ("this session only" is ticked): untick it to search every session of the tenant.'
        : 'Searches every session of the tenant.';
  };
  sayScope();
  // A scroll box, a Tab stop only while it holds hits (newcomer ncaudit72 F7: before a search it was a stop showing nothing).
  const results = h('ol', { class: 'timeline', id: 'recall-results', 'aria-label': 'Recall hits' });
  const syncStop = () => (results.querySelector('li[data-event]') ? results.setAttribute('tabindex', '0') : results.removeAttribute('tabindex'));
  // A live region, always in the page (one shown only when it has words is not reliably announced).
  const status = h('p', { class: 'muted', id: 'recall-status', role: 'status' });
  const more = /** @type {HTMLButtonElement} */ (
    h('button', { type: 'button', id: 'recall-more', hidden: true, onclick: () => void page('next') }, 'More hits')
  );
  /** Searches started so far: an answer for an older one is dropped. */
  let searches = 0;
  /** The latest search's query (its words and filters) and the cursor of its next page. */
  let query = new URLSearchParams();
  /** @type {string | undefined} */
  let cursor;
  let shown = 0;
  let reading = false;
  /** @param {RecallPage['items'][number]} hit */
  const item = (hit) =>
    h(
      'li',
      { class: [hit.archived ? 'archived' : '', hit.firstMention ? 'first-mention' : ''].join(' ').trim(), 'data-event': hit.eventId },
      h('span', { class: 'kind' }, hit.type),
      h('a', { href: sessionHref(hit.sessionId), 'aria-label': `session ${revealedText(hit.sessionId)}` }, stored(hit.sessionId)),
      ' ',
      hitRowLink(hit, known, sessionId),
      h('span', { class: 'muted' }, ' ', stored(hit.eventId), ' ', hitTime(hit, known)),
      hitWriter(hit, known),
      hit.firstMention ? h('span', { class: 'badge added', title: 'the session’s earliest event that mentions these words' }, 'first mention') : null,
      // The compaction that archived it: a link opening its details (in the hit's session), named
      // with its visible words and then its full id ({@link archivedByName}).
      hit.archived && hit.compactionId
        ? h(
            'a',
            {
              class: 'badge archived archived-by',
              href: `${sessionHref(hit.sessionId)}/c/${encodeURIComponent(hit.compactionId)}`,
              'aria-label': `${archivedByName(hit.compactionId)}: open its details`,
              title: `compaction ${revealedText(hit.compactionId)}`,
            },
            'archived by ',
            stored(short(hit.compactionId)),
          )
        : hit.archived
          ? h('span', { class: 'badge archived' }, 'archived')
          : null,
      h('div', {}, snippet(hit.snippet)),
    );
  /**
   * Reads the first page of a new search (`new`: the words and filters in the form) or the next
   * page of the latest one (`next`): its first page again, replacing the hits on screen, when the
   * service refused the next page's cursor as another release's ({@link pageOrRestart}; its words
   * and filters as they were sent), the status saying so.
   * @param {'new' | 'next'} how
   */
  const page = async (how) => {
    const fresh = how === 'new';
    if (!fresh && (reading || !cursor)) return;
    if (fresh) {
      searches++;
      query = new URLSearchParams({ q: input.value, limit: String(RECALL_PAGE) });
      if (sessionId !== undefined && only.checked) query.set('sessionId', sessionId);
      if (kind.value) query.set('type', kind.value);
      if (archived.value) query.set('archived', archived.value);
      cursor = undefined;
    }
    const turn = searches;
    const stale = () => turn !== searches || !results.isConnected;
    const sent = query;
    /** @param {string | undefined} after @returns {Promise<RecallPage>} */
    const read = (after) => {
      const ask = new URLSearchParams(sent);
      if (after) ask.set('cursor', after);
      return api(`/v1/recall?${ask}`);
    };
    // The keyboard stays on "More hits" (aria-disabled while the page is read: a disabled button
    // loses focus), or goes to the first new hit when the button hides (no more hits).
    const onButton = !fresh && document.activeElement === more;
    reading = true;
    more.setAttribute('aria-disabled', 'true');
    try {
      const { page: answer, restarted } = await pageOrRestart(read, cursor);
      if (stale()) return;
      const first = fresh || restarted;
      if (first) {
        shown = 0;
        results.replaceChildren();
        // Said by the status: hidden from screen readers here (it was said twice).
        if (answer.items.length === 0) results.append(h('li', { class: 'muted', 'aria-hidden': 'true' }, 'no hit'));
      }
      const firstNew = first ? 0 : results.children.length;
      for (const hit of answer.items) results.append(item(hit));
      shown += answer.items.length;
      syncStop();
      cursor = answer.nextCursor;
      more.hidden = !cursor;
      const where = recallScope(sent);
      status.textContent =
        shown === 0 && !restarted
          ? `no hit (searched ${where})${sent.has('sessionId') ? ': untick "this session only" to search every session' : ''}`
          : (restarted ? `${RESTARTED}; search started again: ` : '') +
            (cursor ? `${counted(shown, 'hit')} shown; more follow` : `${counted(shown, 'hit')}, all shown`) +
            ` (searched ${where})`;
      if (onButton && more.hidden) focusOn(/** @type {HTMLElement | null} */ (results.children[firstNew] ?? status));
    } catch (err) {
      if (stale()) return;
      if (err instanceof NeedsKey) return showKeyPrompt(err.message);
      if (fresh) {
        results.replaceChildren(
          h(
            'li',
            {},
            errorBox('The search failed', err, () => void page(how)),
          ),
        );
        syncStop();
        more.hidden = true;
        status.textContent = '';
      } else
        results.append(
          h(
            'li',
            {},
            errorBox('More hits could not be read', err, () => (results.lastElementChild?.remove(), void page('next'))),
          ),
        );
    } finally {
      if (turn === searches) {
        reading = false;
        more.removeAttribute('aria-disabled');
      }
    }
  };
  const search = () => void page('new');
  return h(
    'section',
    { class: 'panel', id: 'recall-panel', 'aria-labelledby': 'recall-heading' },
    h('h2', { id: 'recall-heading', tabindex: '-1' }, sessionId === undefined ? 'Recall: search every session' : 'Recall'),
    h(
      'form',
      {
        class: 'inline',
        id: 'recall',
        onsubmit: (e) => {
          e.preventDefault();
          search();
        },
      },
      input,
      sessionId !== undefined ? h('label', {}, only, ' this session only') : null,
      h('label', {}, 'Kind ', kind),
      h('label', {}, 'Archived ', archived),
      h('button', { type: 'submit' }, 'Search'),
    ),
    scope,
    status,
    results,
    more,
  );
}

/** The estimators a log entry's costs are kept in (docs/strategies-and-triggers.md), the chart's choice. */
/** @type {Array<Schemas['Estimator']>} */
const ESTIMATORS = ['cl100k_base', 'o200k_base', 'chars'];

/**
 * The session page. The session's summary, then its log and compactions up to the summary's
 * revision ({@link readSession}: one consistent state, "as of revision N" on the page), are read
 * before anything on screen is replaced: when a read fails, the page stays as it was and the error
 * goes to the caller; meanwhile the loading line says what is read ({@link showLoading}). The
 * selected compaction's diff is read after, into its own panel ({@link ShownSession}`.show`),
 * which shows its own errors.
 *
 * Every token figure names its estimator: the window in the facts (the summary's), the policy's,
 * each compaction's (its own: a session's compactions may count in different ones), and the chart,
 * drawn in one estimator (the policy's, else the last compaction's, else the summary's; a choice
 * of the three), which lists the compactions that counted in another.
 * @param {string} sessionId
 * @param {string | undefined} selected a compaction id from the link
 * @param {() => boolean} isCurrent false once another route was asked for (its answer is dropped)
 * @param {number} [timelineAt] a revision: the timeline opens on its page, not on the selected
 *   compaction's (the page read again keeps its timeline where it was); the first page without it
 * @param {ResolvedTime} [goneTo] an event "Go to time" resolved to: the timeline opens on its row
 * @param {RowLink} [rowLink] a row link's event or revision (a recall hit's row, a compaction's
 *   policy revision): the timeline goes to its row
 */
async function renderSession(sessionId, selected, isCurrent, timelineAt, goneTo, rowLink) {
  const path = `/v1/sessions/${encodeURIComponent(sessionId)}`;
  const { summary, asOf, log, compactions, historyRestarted, erased } = await readSession(sessionId, isCurrent, (entries, s) =>
    showLoading(['Reading session ', stored(sessionId), `: ${counted(entries, 'log entry', 'log entries')} of revisions up to ${s.revision} read…`]),
  );
  if (!isCurrent()) return;
  const byId = new Map(compactions.map((c) => [c.compactionId, c]));
  /** @type {Map<string, LogEntry>} the page's conversation events and summaries by id (what a compaction archived was) */
  const eventsById = new Map();
  for (const entry of log) if (entry.type === 'ConversationEventAppended' && entry.eventId !== undefined) eventsById.set(entry.eventId, entry);
  /** @type {Map<string, KnownEvent>} the page's events, for its recall hits */
  const knownEvents = new Map();
  for (const entry of log) {
    if (entry.type === 'ConversationEventAppended')
      knownEvents.set(entry.eventId ?? '', { revision: entry.revision, clientTime: typeof (/** @type {any} */ (entry.data)?.createdAt) === 'string' });
    else if (entry.type === 'SummaryInserted')
      knownEvents.set(entry.eventId ?? '', { revision: entry.revision, clientTime: false, compactionId: entry.compactionId });
  }
  const diffSlot = h('div', {
    id: 'diff-slot',
    // Escape inside the open details closes them (as their Close button).
    onkeydown: (/** @type {Event} */ e) => {
      if (/** @type {KeyboardEvent} */ (e).key !== 'Escape' || diffSlot.childElementCount === 0) return;
      e.preventDefault();
      closeDetails(sessionId);
    },
  });
  /** The link that selects compaction `id` on this page. @param {string} id */
  const compactionHref = (id) => `${sessionHref(sessionId)}/c/${encodeURIComponent(id)}`;
  const select = (/** @type {string} */ id) => {
    location.hash = compactionHref(id);
  };
  /** @type {Schemas['Estimator']} */
  const estimator = summary.policy?.estimator ?? compactions.at(-1)?.estimator ?? summary.estimator;
  const chartSlot = h('div', { id: 'chart-slot' });
  /** Draws the chart and its note in `unit`. @param {Schemas['Estimator']} unit */
  const drawChart = (unit) => {
    /** @type {Map<Schemas['Estimator'], number[]>} numbers (1-based, as in the table) of the compactions counted in another unit */
    const others = new Map();
    compactions.forEach((c, i) => {
      if (c.estimator === unit) return;
      const numbers = others.get(c.estimator) ?? [];
      numbers.push(i + 1);
      others.set(c.estimator, numbers);
    });
    chartSlot.replaceChildren(chart(windowCurve(log, unit), compactions, compactionHref, unit));
    if (others.size === 0) return;
    const listed = [];
    for (const [other, numbers] of others)
      listed.push(`${numbers.length === 1 ? 'compaction' : 'compactions'} ${numbers.map((n) => `#${n}`).join(', ')} in ${other}`);
    chartSlot.append(
      h(
        'p',
        { class: 'muted', id: 'chart-note' },
        `Dotted marks: compactions counted in another estimator than this chart's ${unit} (their figures are in their own unit): ${listed.join('; ')}.`,
      ),
    );
  };
  const unitChoice = /** @type {HTMLSelectElement} */ (
    h(
      'select',
      {
        name: 'estimator',
        id: 'chart-estimator',
        onchange: () => drawChart(/** @type {any} */ (unitChoice.value)),
      },
      ESTIMATORS.map((e) => h('option', { value: e, selected: e === estimator }, e)),
    )
  );
  drawChart(estimator);
  const rows = compactions.map((c, i) =>
    h(
      'tr',
      { class: 'clickable', 'data-compaction': c.compactionId, onclick: () => select(c.compactionId) },
      h('td', { class: 'num' }, i + 1),
      // A link (a Tab stop, Enter opens the details), named with the full id for screen readers.
      h(
        'td',
        { title: c.compactionId },
        h(
          'a',
          { class: 'open', href: compactionHref(c.compactionId), 'aria-label': `compaction #${i + 1} ${revealedText(c.compactionId)}` },
          stored(short(c.compactionId)),
        ),
      ),
      h(
        'td',
        {},
        c.outcome,
        c.origin === 'auto' ? h('span', { class: 'badge' }, 'auto') : null,
        c.reason ? h('span', { class: 'muted' }, ` ${c.reason}`) : null,
        c.triggerStillFires ? h('span', { class: 'badge archived', title: stillFiresTitle }, 'still fires') : null,
      ),
      h('td', {}, c.strategy.type),
      // "14,990 →" and "1,854" each kept whole, the line free to break between them (newcomer ncaudit72 F6: 4 px past the panel)
      h(
        'td',
        { class: 'num figures' },
        h('span', {}, `${fmt(c.tokensBefore)} →`),
        ' ',
        h('span', {}, fmt(c.tokensAfter)),
        h('span', { class: 'unit' }, ` ${c.estimator}`),
      ),
      h(
        'td',
        {
          class: 'num',
          title: c.archivedOnArrival.length ? `${archivedCount(c)}: late answers to calls it archived, archived when they arrived` : undefined,
        },
        c.archivedOnArrival.length ? `${fmt(c.archivedIds.length)} + ${fmt(c.archivedOnArrival.length)}` : fmt(c.archivedIds.length),
      ),
      h('td', { class: 'recorded' }, compactionTime(c)),
    ),
  );
  /** @param {string} time */
  const resolveTime = async (time) => {
    /** @type {Schemas['Window']} */
    const window = await api(`${path}/window?atTime=${encodeURIComponent(time)}&estimator=${estimator}`);
    if (!window.resolved) throw new Error('the service answered no resolved revision for this time');
    return { resolved: window.resolved, window };
  };
  /** @type {Timeline | undefined} */
  let timelineShown;
  // Its skip link shows while it is open (after "Skip to content": the session page's own skip links).
  const windowSkip = skipLink('skip-window-at', 'Skip to "Window at revision"', () => main.querySelector('#window-at-heading'));
  windowSkip.hidden = true;
  const windowAt = windowAtPanel(
    path,
    estimator,
    compactionHref,
    (revision) => timelineShown?.viewAt(revision),
    (open) => (windowSkip.hidden = !open),
  );
  const logTimeline = timeline(
    log,
    byId,
    select,
    {
      resolve: resolveTime,
      asOf,
      readAgainAt: (resolved) => void render(true, resolved),
      readAgainAtEvent: (eventId) => readAgainAtEvent(sessionId, eventId),
      opened: goneTo,
      showWindow: (revision, window, resolved) => windowAt.showAt(revision, window, resolved),
      closeWindow: () => windowAt.clear(),
    },
    timelineAt,
    erased,
  );
  timelineShown = logTimeline;
  /** @type {string | undefined} the compaction the diff panel is for (the latest asked) */
  let wanted;
  /** @type {Element | undefined} what had the keyboard focus when the details were opened (it gets it back on Close) */
  let opener;
  /** @type {TimelinePlace | undefined} where `opener` was on the timeline, when it was there (its page may have turned since) */
  let openerPlace;
  /**
   * Shows compaction `id`'s details in the diff panel (undefined: closes it). Opened by the
   * keyboard or a click on this page (`moveFocus`), the focus goes to the panel's heading and the
   * announcer says so; closed, the focus goes back to what opened it (a link of the timeline whose
   * page turned to the compaction's marker meanwhile: that page again and the same link; else the
   * compaction's link in the list), and the announcer says so.
   * @param {string | undefined} id @param {boolean} [reveal] whether the timeline turns to its row
   * @param {boolean} [moveFocus]
   */
  const show = async (id, reveal = true, moveFocus = false) => {
    const was = wanted;
    wanted = id;
    document.title = pageTitle(sessionId, id);
    for (const row of rows) row.classList.toggle('selected', row.getAttribute('data-compaction') === id);
    const active = document.activeElement;
    if (id !== undefined && active && active !== document.body && !diffSlot.contains(active)) {
      opener = active;
      openerPlace = logTimeline.placeOf(active);
    }
    logTimeline.showCompaction(id, reveal);
    if (id === undefined) {
      const closing = diffSlot.childElementCount > 0;
      diffSlot.replaceChildren();
      if (closing && moveFocus && was !== undefined) {
        if (opener?.isConnected) focusOn(/** @type {HTMLElement} */ (opener));
        else if (!(openerPlace && logTimeline.focusPlace(openerPlace)))
          focusOn(/** @type {HTMLElement | null} */ (main.querySelector(`#compactions tr[data-compaction="${CSS.escape(was)}"] a`)));
        announce(`Compaction ${revealedText(short(was))} details closed`);
      }
      return;
    }
    const what = ['Compaction ', stored(id), ' could not be shown'];
    const close = h('a', { href: sessionHref(sessionId), class: 'close', onclick: () => (closingDetails = true) }, 'Close');
    const closeButton = h('button', { type: 'button', id: 'diff-close', onclick: () => closeDetails(sessionId) }, 'Close');
    const panel = (/** @type {Array<Node | string>} */ ...children) => h('section', { class: 'panel', id: 'diff-panel' }, children);
    if (!diffSlot.querySelector('#diff')) diffSlot.replaceChildren(panel(h('p', { class: 'muted' }, 'Reading compaction ', stored(id), '…')));
    try {
      /** @type {CompactionDiff} */
      const diff = await api(`${path}/compactions/${encodeURIComponent(id)}/diff`);
      // Late answers archived on arrival after the page's revision are not shown, as in its list.
      const onArrival = diff.archivedOnArrival.filter((a) => BigInt(a.revision) <= asOf);
      if (wanted !== id) return;
      diffSlot.replaceChildren(diffView(sessionId, { ...diff, archivedOnArrival: onArrival }, byId.get(id), closeButton, eventsById));
      if (moveFocus) {
        focusOn(/** @type {HTMLElement | null} */ (diffSlot.querySelector('#diff-heading')), true);
        announce(`Compaction ${revealedText(short(id))} details opened: Escape or Close closes them`);
      }
    } catch (err) {
      if (wanted !== id || !diffSlot.isConnected) return;
      if (err instanceof NeedsKey) return showKeyPrompt(err.message);
      diffSlot.replaceChildren(panel(errorBox(what, err, () => show(id), [close])));
    }
  };
  showPage(
    true,
    {
      sessionId,
      has: (id) => byId.has(id),
      show: (id) => show(id, true, true),
      timelineAt: logTimeline.firstRevision,
      goToEvent: logTimeline.goToEvent,
      goToRevision: logTimeline.goToRevision,
      leaveTimeTravel: () => {
        windowAt.clear();
        logTimeline.forgetGoneTo();
      },
    },
    h('p', {}, h('a', { href: '#/' }, '← all sessions')),
    h(
      'section',
      { class: 'panel' },
      stored(sessionId, 'h1', { id: 'session-title' }),
      h(
        'dl',
        { class: 'facts' },
        h('div', {}, h('dt', {}, 'user'), h('dd', {}, summary.userId === undefined ? '—' : stored(summary.userId))),
        h('div', {}, h('dt', {}, 'revision'), h('dd', {}, summary.revision)),
        h('div', { id: 'event-count' }, h('dt', {}, 'conversation events'), h('dd', {}, fmt(summary.eventCount))),
        h(
          'div',
          {},
          h('dt', {}, 'window'),
          h('dd', {}, `${counted(summary.windowEvents, 'event')} (summaries included), ${fmt(summary.windowTokens)} ${summary.estimator}`),
        ),
        h(
          'div',
          {},
          h('dt', {}, 'compactions'),
          h(
            'dd',
            {},
            compactionCounts(summary),
            summary.triggerStillFires ? h('span', { class: 'badge archived', title: stillFiresTitle }, 'trigger still fires') : null,
          ),
        ),
        h(
          'div',
          {},
          h('dt', {}, 'policy'),
          h('dd', summary.policy ? { title: policyTitle(summary.policy) } : {}, summary.policy ? policyText(summary.policy) : 'none'),
        ),
        // absent only from a replica of a release before it (a rolling upgrade): then not shown
        summary.summarizerSpend
          ? h(
              'div',
              { id: 'summarizer-spend' },
              h('dt', {}, 'summarizer spend'),
              h(
                'dd',
                {},
                spendText(summary.summarizerSpend),
                summary.summarizerSpend.discarded.calls ? `; of which discarded: ${spendText(summary.summarizerSpend.discarded)}` : '',
              ),
            )
          : null,
        h('div', {}, h('dt', {}, 'last activity'), h('dd', {}, timeOf(summary.lastActivityAt, 'last activity'))),
      ),
      h(
        'p',
        { class: 'muted', id: 'as-of' },
        `As of revision ${summary.revision}, the session's last when this page was read: the facts, chart, timeline and compactions all describe that revision, and events written since are not shown (`,
        h('a', { href: '#', onclick: (e) => (e.preventDefault(), void render(true)) }, 'read again'),
        '; recall searches the session as it is now).',
      ),
      erased ? erasedLivesNote(erased) : null,
    ),
    h(
      'section',
      { class: 'panel', 'aria-labelledby': 'chart-heading' },
      h(
        'div',
        { class: 'chart-head' },
        h('h2', { id: 'chart-heading' }, 'Window size over revisions; dashed lines: compactions'),
        // The estimator's choice, named by its own label (the estimator the chart counts the window in).
        h('span', {}, h('label', { for: 'chart-estimator' }, 'Window counted in'), ' ', unitChoice),
      ),
      chartSlot,
    ),
    h(
      'div',
      { class: 'grid' },
      h('div', {}, diffSlot, windowAt.node, h('section', { class: 'panel' }, h('h2', { id: 'timeline-heading' }, timelineHeading(log)), logTimeline.nodes)),
      h(
        'div',
        {},
        h(
          'section',
          { class: 'panel', 'aria-labelledby': 'compactions-heading' },
          h('h2', { id: 'compactions-heading' }, `Compactions (${compactions.length})`),
          historyRestarted
            ? h(
                'p',
                { class: 'muted', id: 'compactions-restarted', role: 'status' },
                `${RESTARTED} while this history was read (a page's cursor was another release's): it was read again from its first page`,
              )
            : null,
          compactions.length === 0
            ? h('p', { class: 'muted' }, 'never compacted')
            : h(
                'table',
                { id: 'compactions' },
                h(
                  'thead',
                  {},
                  h(
                    'tr',
                    {},
                    h('th', { class: 'num' }, '#'),
                    h('th', {}, 'id'),
                    h('th', {}, 'outcome'),
                    h('th', {}, 'strategy'),
                    h('th', { class: 'num' }, 'before → after (estimator)'),
                    h('th', { class: 'num' }, 'archived'),
                    h('th', { title: RECORDED_TITLE }, 'recorded (store time)'),
                  ),
                ),
                h('tbody', {}, rows),
              ),
        ),
        recallBox(sessionId, (eventId) => knownEvents.get(eventId)),
      ),
    ),
  );
  // The parts a keyboard user goes to past the chart and the timeline (G1 skip links, after "Skip to content").
  pageSkips.replaceChildren(
    skipLink('skip-compactions', 'Skip to compactions', () => main.querySelector('#compactions-heading')),
    skipLink('skip-recall', 'Skip to recall', () => main.querySelector('#recall-heading')),
    windowSkip,
  );
  // A link to a compaction (a recall hit's "archived by" from the list or another session, a compaction written
  // since): once its details are shown, their heading takes the focus, as when opened on the page (newcomer ncui74
  // F6: it stayed on the session's heading, far above them). A row gone to keeps it.
  void show(selected, timelineAt === undefined, routed && selected !== undefined && !goneTo && rowLink === undefined);
  if (rowLink !== undefined) 'eventId' in rowLink ? logTimeline.goToEvent(rowLink.eventId, true) : logTimeline.goToRevision(rowLink.revision);
  // Said once, now that the read is done (the loading line's progress is not a live region).
  announce(`Session ${revealedText(sessionId)} read: ${counted(log.length, 'log entry', 'log entries')}, as of revision ${summary.revision}`);
  // A new page: its heading takes the focus (the title names it), or the row "Go to time" went to.
  if (routed) {
    if (goneTo || rowLink !== undefined) logTimeline.focusTarget();
    else focusOn(/** @type {HTMLElement | null} */ (main.querySelector('#session-title')), true);
  }
}

/**
 * The document's title for a session page: `Session <id> – Session audit`, with a compaction
 * selected `Compaction <short id> – Session <id> – Session audit` (hidden characters as markers).
 * @param {string} sessionId @param {string | undefined} [compactionId]
 */
function pageTitle(sessionId, compactionId) {
  const session = `Session ${revealedText(sessionId)} – ${APP_TITLE}`;
  return compactionId === undefined ? session : `Compaction ${revealedText(short(compactionId))} – ${session}`;
}

// ---- routing ----------------------------------------------------------------------------------

/**
 * The session page on screen: its id, `has(compactionId)` (whether that compaction is in the page's
 * list), `show(compactionId)`, which reads that compaction's diff into the page's diff panel
 * (undefined: none) without reading the session again (a failure shows in that panel) and turns
 * the timeline to its row, and `timelineAt()`, the revision the timeline's page on screen starts at;
 * `leaveTimeTravel()` shows the page as a fresh load of its plain link does: "Window at revision"
 * closed, the marks as of the page's revision, no row gone to.
 * @typedef {{
 *   sessionId: string,
 *   has: (compactionId: string) => boolean,
 *   show: (compactionId: string | undefined) => Promise<void>,
 *   timelineAt: () => number | undefined,
 *   goToEvent: (eventId: string) => void,
 *   goToRevision: (revision: bigint) => void,
 *   leaveTimeTravel: () => void,
 * }} ShownSession
 */

/** The page's own name, the end of every document title. */
const APP_TITLE = 'Session audit';
/** Whether a route was shown already: from the second on, a new page takes the focus to its heading. */
let routed = false;

/** Whether a page worth keeping is on screen (the session list or a session; not loading, an error or the key prompt). */
let pageShown = false;
/** @type {ShownSession | undefined} */
let shownSession;
/** Routes asked for so far: an answer for an older one is dropped. */
let renders = 0;
/**
 * Whether the next route is the plain session link that the details' Close (or Escape) went to: the
 * page keeps its "Window at revision" and the row gone to. Any other way to that link (Back, Forward,
 * typed) shows it as a fresh load does (newcomer ncui69 F7).
 */
let closingDetails = false;

/** The details' Close and Escape: back to the session's plain link, keeping what the page shows. @param {string} sessionId */
function closeDetails(sessionId) {
  closingDetails = true;
  location.hash = sessionHref(sessionId);
}

/**
 * Replaces the page.
 * @param {boolean} keep whether it is worth keeping on an error (the session list or a session)
 * @param {ShownSession | undefined} session
 * @param {...Node} nodes
 */
function showPage(keep, session, ...nodes) {
  main.replaceChildren(...nodes);
  pageSkips.replaceChildren();
  pageShown = keep;
  shownSession = session;
}

/** The page's own skip links, after "Skip to content" (a session page's: {@link skipLink}); emptied by every new page. */
const pageSkips = /** @type {HTMLElement} */ (document.getElementById('page-skips'));

/**
 * A skip link of the page (WCAG technique G1): off screen until it has the keyboard focus (as "Skip
 * to content"), it moves the focus to `target()`'s element (a heading, focusable by script only,
 * {@link focusOn}) and scrolls it into view. Not by its `href` (`#<id>`, for the status bar): the
 * route is in the URL's hash.
 * @param {string} id @param {string} label e.g. "Skip to recall" @param {() => HTMLElement | null} target
 * @returns {HTMLElement}
 */
function skipLink(id, label, target) {
  const link = h('a', { class: 'skip-link', id, href: '#main' }, label);
  link.addEventListener('click', (e) => {
    e.preventDefault();
    focusOn(target(), true);
  });
  return link;
}

/**
 * Shows an error without losing what is on screen: in the banner above the page when one is shown,
 * else (nothing to keep: the first load) in place of the page. A refused key shows the key prompt.
 * @param {string | Array<Node | string>} what what could not be done
 * @param {unknown} err
 * @param {() => void} retry
 */
function failInPlace(what, err, retry) {
  if (err instanceof NeedsKey) return showKeyPrompt(err.message);
  if (pageShown) return showBanner(what, err, retry);
  showPage(
    false,
    undefined,
    h('section', { class: 'panel', id: 'page-error' }, errorBox(what, err, retry, [...errorLinks(err), h('a', { href: '#/' }, 'All sessions')])),
  );
}

/**
 * A percent-encoded part of the page's link, decoded.
 * @param {string} part
 * @returns {string}
 */
function linkPart(part) {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new Error(`This link is malformed (${part.slice(0, 40)} is not valid percent-encoding): go back to the session list.`);
  }
}

/** The mode /health last answered ({@link readMode}); undefined before its first answer. @type {Schemas['Health']['mode'] | undefined} */
let lastMode;

/**
 * The service's mode from /health (open without a key, also with API keys configured): `api-keys` when
 * every /v1 read needs a key, or open development mode; undefined when /health does not answer with one.
 * @returns {Promise<Schemas['Health']['mode'] | undefined>}
 */
function readMode() {
  return fetch('/health', { cache: 'no-store' })
    .then((r) => r.json())
    .then((/** @type {Schemas['Health']} */ health) => (lastMode = health.mode))
    .catch(() => undefined);
}

/**
 * Shows the service's mode (open or with keys) in the header once `mode` is read; when /health does not answer, the last one stays.
 * @param {Promise<Schemas['Health']['mode'] | undefined>} mode
 */
function showMode(mode) {
  void mode.then((shown) => {
    if (shown !== undefined) /** @type {HTMLElement} */ (document.getElementById('mode')).textContent = shown;
  });
}

/**
 * The links of a session page (`#/s/<id>`, with `/c/<compaction id>`, `/e/<event id>` or
 * `/r/<revision>`, a revision of digits only), each part percent-encoded; nothing may follow
 * but a trailing `/`. Groups: the session id, the compaction id, the event id, the revision.
 */
const SESSION_ROUTE = /^#\/s\/([^/?]+)(?:\/c\/([^/?]+)|\/e\/([^/?]+)|\/r\/(\d+))?\/?$/;
/** The links of the session list: no hash, `#`, `#/`, or `#/?` with its filters (`q`, `user`). */
const LIST_ROUTE = /^(?:#?|#\/(?:\?.*)?)$/;

/**
 * The session a page link `hash` names (`#/s/<id>…`, percent-decoded), or undefined: none, `.` or
 * `..`, or not valid percent-encoding.
 * @param {string} hash
 * @returns {string | undefined}
 */
function sessionOfLink(hash) {
  const session = hash.match(/^#\/s\/([^/?]+)/);
  if (!session) return undefined;
  try {
    const id = decodeURIComponent(session[1] ?? '');
    return id === '.' || id === '..' ? undefined : id;
  } catch {
    return undefined;
  }
}

/**
 * Why the page's link `hash` opens nothing, and the links that do (newcomer ncui69 F10): a
 * session link with a part this page does not make (`#/s/x/r/-1`, `#/s/x/y`), a session id
 * `.` or `..` (the browser would resolve it out of the API's path; also percent-encoded), or
 * another route.
 * @param {string} hash e.g. `#/s/x/r/-1`
 * @returns {string}
 */
function unknownRouteMessage(hash) {
  const shown = hash.length > 80 ? `${hash.slice(0, 80)}…` : hash;
  const session = hash.match(/^#\/s\/([^/?]*)/);
  let id;
  try {
    id = session ? decodeURIComponent(session[1] ?? '') : undefined;
  } catch {
    id = undefined;
  }
  if (id === '.' || id === '..' || id === '')
    return `${shown}: "${id}" is not a session id (a session id is 1 to 128 ASCII letters, digits or _ - : @ ., not "." or ".."); go back to the session list`;
  if (session)
    return `${shown}: a session's links are #/s/<session id>, followed by /c/<compaction id>, /e/<event id> or /r/<revision> (a revision is a whole number from 0); go to the session, or back to the session list`;
  return `${shown}: the page's links are #/ (the session list), #/s/<session id> (a session) and #/erasures; go back to the session list`;
}

/**
 * Shows the route for the link in the URL: the session list, or a session page (with the linked
 * compaction's diff). The same session already on screen only opens the compaction, unless
 * `reread` (read the session again: its "read again" link). While a route is read, the loading
 * line says so above the page on screen.
 * @param {boolean} [reread]
 * @param {ResolvedTime} [goTo] with `reread`: the event "Go to time" resolved to, the timeline
 *   opening on its row (it was written after the page was read)
 */
async function render(reread = false, goTo) {
  const turn = ++renders;
  const fromClose = closingDetails;
  closingDetails = false;
  const isCurrent = () => turn === renders;
  const forget = /** @type {HTMLButtonElement} */ (document.getElementById('forget-key'));
  forget.hidden = !sessionStorage.getItem(KEY_STORAGE);
  showKeyInUse();
  const mode = readMode();
  showMode(mode);
  // No key yet and the service needs one (/health says so, without a key): the prompt at once, not after a /v1 read
  // answered 401, which the browser logs as a failed request in its console on every first visit. Once /health said
  // open mode, routes are read without waiting for it (a service restarted with keys answers 401: the prompt too).
  // A key stored while /health was answering (the prompt of another render, a script) is used, not removed by
  // the prompt: the check is made again after the wait.
  if (!sessionStorage.getItem(KEY_STORAGE) && lastMode !== 'open (no API keys configured)' && (await mode) === 'api-keys') {
    if (!sessionStorage.getItem(KEY_STORAGE)) {
      if (isCurrent()) showKeyPrompt('this service needs an API key');
      return;
    }
    if (!isCurrent()) return;
    forget.hidden = false;
    showKeyInUse();
  }
  const match = location.hash.match(SESSION_ROUTE);
  /** @type {string | Array<Node | string>} */
  let what = 'The session list could not be read';
  try {
    if (match) {
      what = 'This link could not be opened';
      const sessionId = linkPart(match[1] ?? '');
      // "." and ".." are no session ids: the browser would resolve them out of the API's path.
      if (sessionId === '.' || sessionId === '..') {
        what = 'This link opens no page';
        throw new UnknownRoute(unknownRouteMessage(location.hash));
      }
      const selected = match[2] ? linkPart(match[2]) : undefined;
      // A row link: the timeline goes to that event (a recall hit's) or revision (a compaction's policy revision).
      /** @type {RowLink | undefined} */
      const rowLink = match[3] ? { eventId: linkPart(match[3]) } : match[4] ? { revision: BigInt(match[4]) } : undefined;
      what = ['Session ', stored(sessionId), ' could not be read'];
      if (!reread && rowLink !== undefined && shownSession?.sessionId === sessionId) {
        clearBanner();
        await shownSession.show(undefined);
        return 'eventId' in rowLink ? shownSession.goToEvent(rowLink.eventId) : shownSession.goToRevision(rowLink.revision);
      }
      // A compaction of the page's list (or none) opens in place; another one (written since, or
      // unknown) reads the session again, so its list, chart and timeline include it.
      if (!reread && shownSession?.sessionId === sessionId && (selected === undefined || shownSession.has(selected))) {
        clearBanner();
        // The plain link (not by Close): as a fresh load of it shows the page, not at a revision gone to before.
        if (selected === undefined && rowLink === undefined && !fromClose) shownSession.leaveTimeTravel();
        return await shownSession.show(selected);
      }
      // Read again, the page keeps its timeline's page.
      const timelineAt = reread && shownSession?.sessionId === sessionId ? shownSession.timelineAt() : undefined;
      showLoading(['Reading session ', stored(sessionId), '…']);
      try {
        await renderSession(sessionId, selected, isCurrent, timelineAt, reread ? goTo : undefined, rowLink);
      } catch (err) {
        // An erased session id: when it was erased, not a bare "not found".
        if (!(err instanceof ApiError && err.code === 'session_not_found' && err.erasedAt !== undefined)) throw err;
        if (isCurrent()) showErased(sessionId, err.erasedAt);
      }
    } else if (/^#\/erasures\/?$/.test(location.hash)) {
      what = 'The erasures could not be read';
      showLoading('Reading the erasures…');
      await renderErasures(isCurrent);
    } else if (!LIST_ROUTE.test(location.hash)) {
      what = 'This link opens no page';
      throw new UnknownRoute(unknownRouteMessage(location.hash), sessionOfLink(location.hash));
    } else {
      showLoading('Reading the session list…');
      await renderSessionList(isCurrent);
    }
    if (isCurrent()) clearBanner();
    routed = true;
  } catch (err) {
    if (isCurrent()) failInPlace(what, withKeyInUse(err), () => void render(reread, goTo));
  } finally {
    if (isCurrent()) clearLoading();
  }
}

/**
 * Forgets the API key: the tenant's data leaves the screen at once (page, banner, loading line;
 * answers still on their way are dropped), then the route is read again without a key, which
 * shows the key prompt when the service needs one (docs/audit-page-and-client.md: without a key, the prompt and no data).
 */
function forgetKey() {
  sessionStorage.removeItem(KEY_STORAGE);
  clearBanner();
  clearAnnouncement();
  document.title = APP_TITLE;
  showPage(false, undefined, h('p', { class: 'muted' }, 'Loading…'));
  void render();
}

/** @type {HTMLButtonElement} */ (document.getElementById('forget-key')).addEventListener('click', forgetKey);
// "Skip to content": the focus goes to the page's heading (else the page). Not by the link's
// `#main`: the route is in the URL's hash.
/** @type {HTMLElement} */ (document.getElementById('skip-link')).addEventListener('click', (e) => {
  e.preventDefault();
  focusOn(/** @type {HTMLElement} */ (main.querySelector('h1') ?? main), true);
});
window.addEventListener('hashchange', () => void render());
void render();
