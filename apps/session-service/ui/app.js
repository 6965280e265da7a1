// @ts-check
/**
 * The audit page at `/ui`: plain ES module, no build step, type-checked against the generated
 * API types (`npm run typecheck`). Routes (in the URL hash):
 *   #/                         session list with search
 *   #/s/<sessionId>            session page: facts, window-token chart, compactions, timeline, recall
 *   #/s/<sessionId>/c/<id>     the same with compaction <id> selected (its before/after diff)
 * With API keys configured the key is asked once and kept in sessionStorage; without one the page
 * shows the prompt and no data.
 */

/** @typedef {import('../../../libs/client/src/openapi-types').components['schemas']} Schemas */
/** @typedef {Schemas['SessionSummary']} SessionSummary */
/** @typedef {Schemas['CompactionHistoryItem']} CompactionItem */
/** @typedef {Schemas['CompactionDiff']} CompactionDiff */
/** @typedef {Schemas['LogPage']['events'][number]} LogEntry */
/** @typedef {Schemas['RecallPage']} RecallPage */
/** @typedef {{ tag?: string } & Record<string, unknown>} Attrs */

const KEY_STORAGE = 'session-audit.apiKey';
const main = /** @type {HTMLElement} */ (document.getElementById('main'));

/** Thrown when the service needs a key (401). */
class NeedsKey extends Error {}

/**
 * GET a JSON route of the service with the stored key.
 * @template T
 * @param {string} path
 * @returns {Promise<T>}
 */
async function api(path) {
  const key = sessionStorage.getItem(KEY_STORAGE);
  const res = await fetch(path, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  if (res.status === 401) throw new NeedsKey(key ? 'the service refused this API key' : 'this service needs an API key');
  const body = await res.json();
  if (!res.ok) throw new Error(`${res.status} ${body.code}: ${body.message}`);
  return body;
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

/** @type {Record<string, string>} */
const ENTITIES = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };

/**
 * A recall snippet as nodes: the service HTML-escapes the excerpt and wraps matched words in
 * <mark>…</mark>; the text is unescaped and inserted as text (never as HTML).
 * @param {string} html
 */
function snippet(html) {
  const out = h('span', { class: 'preview' });
  html.split(/(<mark>|<\/mark>)/).reduce((inMark, part) => {
    if (part === '<mark>') return true;
    if (part === '</mark>') return false;
    const text = part.replace(/&(amp|lt|gt|quot|#39);/g, (m) => ENTITIES[m] ?? m);
    out.append(inMark ? h('mark', {}, text) : text);
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

/** @param {string} iso an ISO-8601 UTC time, shown as `2026-01-31 12:00:00` (UTC) */
const when = (iso) => iso.replace('T', ' ').slice(0, 19);
/** @param {number} n */
const fmt = (n) => n.toLocaleString('en-US');
/** @param {string} id */
const short = (id) => (id.length > 14 ? `${id.slice(0, 8)}…` : id);
/** @param {string} sessionId */
const sessionHref = (sessionId) => `#/s/${encodeURIComponent(sessionId)}`;

// ---- key prompt -------------------------------------------------------------------------------

/** @param {string} reason */
function showKeyPrompt(reason) {
  const input = /** @type {HTMLInputElement} */ (h('input', { type: 'password', name: 'apiKey', placeholder: 'API key', autocomplete: 'off', required: true }));
  main.replaceChildren(
    h(
      'section',
      { class: 'panel prompt', id: 'key-prompt' },
      h('h1', {}, 'API key needed'),
      h('p', {}, `${reason}. Enter one of the service's API keys: it is kept in this tab only (sessionStorage) and sent as a Bearer token.`),
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

async function renderSessionList() {
  /** @type {SessionSummary[]} */
  let sessions = [];
  /** @type {string | undefined} */
  let cursor;
  const params = new URLSearchParams(location.hash.split('?')[1] ?? '');
  const search = /** @type {HTMLInputElement} */ (
    h('input', { type: 'search', name: 'search', placeholder: 'session id contains…', value: params.get('q') ?? '' })
  );
  const user = /** @type {HTMLInputElement} */ (h('input', { type: 'text', name: 'userId', placeholder: 'user id (exact)', value: params.get('user') ?? '' }));
  const body = h('tbody');
  const more = h('button', { type: 'button', id: 'more', hidden: true, onclick: () => load() }, 'Load more');
  const count = h('span', { class: 'muted' });

  const draw = () => {
    const q = search.value.trim().toLowerCase();
    const shown = sessions.filter((s) => s.sessionId.toLowerCase().includes(q));
    count.textContent = `${shown.length} of ${sessions.length} loaded`;
    body.replaceChildren(
      ...shown.map((s) =>
        h(
          'tr',
          { class: 'clickable', 'data-session': s.sessionId, onclick: () => (location.hash = sessionHref(s.sessionId)) },
          h('td', {}, h('a', { href: sessionHref(s.sessionId) }, s.sessionId)),
          h('td', {}, s.userId ?? '—'),
          h('td', { class: 'num' }, fmt(s.eventCount)),
          h('td', { class: 'num' }, fmt(s.windowTokens)),
          h(
            'td',
            { class: 'num' },
            fmt(s.compactionCount),
            s.failedCompactionCount ? h('span', { class: 'badge archived' }, `${s.failedCompactionCount} failed`) : null,
          ),
          h('td', {}, s.policy ? s.policy.strategy.type : '—'),
          h('td', {}, when(s.lastActivityAt)),
        ),
      ),
    );
  };
  const load = async () => {
    const query = new URLSearchParams({ limit: '100' });
    if (user.value.trim()) query.set('userId', user.value.trim());
    if (cursor) query.set('cursor', cursor);
    /** @type {Schemas['SessionList']} */
    const page = await api(`/v1/sessions?${query}`);
    sessions = sessions.concat(page.sessions);
    cursor = page.nextCursor;
    more.hidden = !cursor;
    draw();
  };
  search.addEventListener('input', draw);
  main.replaceChildren(
    h(
      'section',
      { class: 'panel' },
      h('h1', {}, 'Sessions'),
      h(
        'form',
        {
          class: 'inline',
          onsubmit: (e) => {
            e.preventDefault();
            sessions = [];
            cursor = undefined;
            load().catch(fail);
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
            h('th', { class: 'num' }, 'Events'),
            h('th', { class: 'num' }, 'Window tokens'),
            h('th', { class: 'num' }, 'Compactions'),
            h('th', {}, 'Policy'),
            h('th', {}, 'Last activity (UTC)'),
          ),
        ),
        body,
      ),
      more,
    ),
  );
  await load();
}

// ---- session page -----------------------------------------------------------------------------

/** @param {string} sessionId */
async function readLog(sessionId) {
  /** @type {LogEntry[]} */
  const all = [];
  let from = '0';
  for (;;) {
    /** @type {Schemas['LogPage']} */
    const page = await api(`/v1/sessions/${encodeURIComponent(sessionId)}/events?fromRevision=${from}&limit=1000`);
    all.push(...page.events);
    if (page.nextRevision === undefined) return all;
    from = page.nextRevision;
  }
}

/** @param {string} sessionId */
async function readCompactions(sessionId) {
  /** @type {CompactionItem[]} */
  const all = [];
  /** @type {string | undefined} */
  let cursor;
  do {
    /** @type {Schemas['CompactionHistoryPage']} */
    const page = await api(`/v1/sessions/${encodeURIComponent(sessionId)}/compactions?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
    all.push(...page.compactions);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
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
 * @param {Array<{ revision: number, tokens: number }>} points
 * @param {CompactionItem[]} compactions
 * @param {(id: string) => void} select
 */
function chart(points, compactions, select) {
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
  const minRev = points.length > 0 ? Math.min(...points.map((p) => p.revision)) : 0;
  const maxRev = Math.max(minRev + 1, ...points.map((p) => p.revision));
  const maxTok = Math.max(1, ...points.map((p) => p.tokens));
  const x = (/** @type {number} */ r) => L + ((r - minRev) / (maxRev - minRev)) * (W - L - R);
  const y = (/** @type {number} */ t) => H - B - (t / maxTok) * (H - T - B);
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'none', role: 'img', 'aria-label': 'window tokens over revisions' });
  svg.append(s('line', { class: 'axis', x1: L, y1: H - B, x2: W - R, y2: H - B }), s('line', { class: 'axis', x1: L, y1: T, x2: L, y2: H - B }));
  for (const t of [0, maxTok / 2, maxTok]) svg.append(s('text', { x: L - 6, y: y(t) + 4, 'text-anchor': 'end' }, fmt(Math.round(t))));
  svg.append(
    s('text', { x: W - R, y: H - 6, 'text-anchor': 'end' }, minRev > 0 ? `revision (${minRev} to ${maxRev})` : `revision (max ${maxRev})`),
    s('text', { x: L + 4, y: T + 10 }, 'window tokens'),
  );
  for (const c of compactions) {
    const line = s('line', { class: 'mark', x1: x(Number(c.revision)), y1: T, x2: x(Number(c.revision)), y2: H - B });
    line.append(s('title', {}, `${c.outcome} ${c.compactionId}: ${c.tokensBefore} → ${c.tokensAfter}`));
    line.addEventListener('click', () => select(c.compactionId));
    svg.append(line);
  }
  // A step line: the window holds its size until the next event.
  let d = '';
  points.forEach((p, i) => {
    d += i === 0 ? `M${x(p.revision)},${y(p.tokens)}` : `H${x(p.revision)}V${y(p.tokens)}`;
  });
  svg.append(s('path', { class: 'line', d }));
  return h('div', { class: 'chart', id: 'chart' }, /** @type {any} */ (svg));
}

/**
 * @param {LogEntry[]} log
 * @param {Map<string, CompactionItem>} byId
 * @param {(id: string) => void} select
 */
function timeline(log, byId, select) {
  const items = [];
  for (const entry of log) {
    const data = /** @type {any} */ (entry.data);
    const rev = h('span', { class: 'muted' }, `#${entry.revision} `);
    if (entry.type === 'ConversationEventAppended') {
      const event = data?.event ?? {};
      const text =
        event.type === 'tool'
          ? (event.responses ?? []).map((/** @type {any} */ r) => `${r.name}: ${r.data}`).join('\n')
          : [event.text ?? '', ...(event.toolCalls ?? []).map((/** @type {any} */ c) => `→ ${c.name}(${c.arguments})`)].filter(Boolean).join('\n');
      items.push(
        h(
          'li',
          { class: entry.archived ? 'archived' : '', 'data-event': entry.eventId },
          rev,
          h('span', { class: 'kind' }, entry.kind ?? ''),
          h('span', { class: 'muted' }, `${entry.eventId} `),
          entry.archived && entry.archivedBy
            ? h(
                'a',
                { class: 'badge archived', href: '#', onclick: (e) => (e.preventDefault(), select(/** @type {string} */ (entry.archivedBy))) },
                `archived by ${short(entry.archivedBy)}`,
              )
            : null,
          h('div', { class: 'preview' }, text.length > 600 ? `${text.slice(0, 600)}…` : text),
        ),
      );
    } else if (entry.type === 'SummaryInserted') {
      items.push(
        h(
          'li',
          { class: entry.archived ? 'archived summary' : 'summary', 'data-event': entry.eventId },
          rev,
          h('span', { class: 'kind' }, 'summary'),
          h('span', { class: 'muted' }, `${entry.eventId} by ${short(entry.compactionId ?? '')}`),
          entry.archived && entry.archivedBy ? h('span', { class: 'badge archived' }, `archived by ${short(entry.archivedBy)}`) : null,
          h('div', { class: 'preview' }, String(data?.text ?? '')),
        ),
      );
    } else if (entry.type === 'CompactionCompleted' || entry.type === 'CompactionFailed') {
      const c = byId.get(entry.compactionId ?? '');
      items.push(
        h(
          'li',
          { class: 'decision' },
          rev,
          h('a', { href: '#', onclick: (e) => (e.preventDefault(), select(entry.compactionId ?? '')) }, `◆ compaction ${short(entry.compactionId ?? '')}`),
          c
            ? ` ${c.outcome} (${c.origin}, ${c.strategy.type}): ${fmt(c.tokensBefore)} → ${fmt(c.tokensAfter)} tokens, ${c.archivedIds.length} archived${c.failure ? `, failed at ${c.failure.stage}: ${c.failure.reason}` : ''}`
            : '',
        ),
      );
    } else if (entry.type === 'AutoCompactionPolicySet') {
      items.push(h('li', { class: 'decision' }, rev, `◇ policy set: ${data?.strategy ? data.strategy.type : 'cleared'}`));
    }
  }
  return h('ol', { class: 'timeline', id: 'timeline' }, items);
}

/** @param {CompactionDiff} diff @param {CompactionItem | undefined} item */
function diffView(diff, item) {
  /** @param {string} title @param {CompactionDiff['before']} side */
  const column = (title, side) =>
    h(
      'div',
      {},
      h('h2', {}, `${title}: ${fmt(side.tokens)} tokens, ${side.events.length} events (revision ${side.revision})`),
      h(
        'ol',
        {},
        side.events.map((e) =>
          h(
            'li',
            { class: e.change === 'kept' ? '' : e.change, 'data-event': e.id, 'data-change': e.change },
            h('span', { class: 'kind' }, e.type),
            h('span', { class: 'muted' }, `${e.id} · ${fmt(e.tokens)} tok`),
            e.change !== 'kept' ? h('span', { class: `badge ${e.change}` }, e.change) : null,
            h('div', { class: 'preview' }, e.preview),
          ),
        ),
      ),
    );
  return h(
    'section',
    { class: 'panel', id: 'diff', 'data-compaction': diff.compactionId },
    h('h2', {}, `Compaction ${diff.compactionId}`),
    item
      ? h(
          'dl',
          { class: 'facts' },
          h('div', {}, h('dt', {}, 'outcome'), h('dd', {}, item.outcome)),
          h('div', {}, h('dt', {}, 'origin'), h('dd', {}, item.origin)),
          h('div', {}, h('dt', {}, 'strategy'), h('dd', { title: JSON.stringify(item.strategy, null, 1) }, brief(item.strategy))),
          h('div', {}, h('dt', {}, 'trigger'), h('dd', {}, item.trigger ? brief(item.trigger) : 'always')),
          h('div', {}, h('dt', {}, 'based on revision'), h('dd', {}, item.basedOnRevision)),
          h('div', {}, h('dt', {}, 'saved'), h('dd', {}, `${fmt(item.tokensSaved)} ${diff.estimator}`)),
          item.summarizer
            ? h(
                'div',
                {},
                h('dt', {}, 'summarizer'),
                h(
                  'dd',
                  {},
                  `${item.summarizer.model} × ${item.summarizer.calls} (${item.summarizer.usage.promptTokens}+${item.summarizer.usage.completionTokens} tok)`,
                ),
              )
            : null,
          item.durationMs !== null ? h('div', {}, h('dt', {}, 'duration'), h('dd', {}, `${fmt(item.durationMs)} ms`)) : null,
          h('div', {}, h('dt', {}, 'at'), h('dd', {}, when(item.at))),
        )
      : null,
    item?.summary
      ? h(
          'div',
          { class: 'summary-text', id: 'summary-text' },
          h('strong', {}, `Summary ${item.summary.id} (covers ${item.summary.coveredIds.length} events): `),
          item.summary.text,
        )
      : null,
    item?.failure ? h('p', { class: 'error' }, `Failed at ${item.failure.stage}: ${item.failure.reason}`) : null,
    h('div', { class: 'diff' }, column('Before', diff.before), column('After', diff.after)),
  );
}

/** @param {string} sessionId */
function recallBox(sessionId) {
  const input = /** @type {HTMLInputElement} */ (h('input', { type: 'search', name: 'recall', placeholder: 'words to find, archived included' }));
  const only = /** @type {HTMLInputElement} */ (h('input', { type: 'checkbox', name: 'thisSession', checked: true }));
  const results = h('ol', { class: 'timeline', id: 'recall-results' });
  return h(
    'section',
    { class: 'panel' },
    h('h2', {}, 'Recall'),
    h(
      'form',
      {
        class: 'inline',
        id: 'recall',
        onsubmit: async (e) => {
          e.preventDefault();
          const query = new URLSearchParams({ q: input.value, limit: '20' });
          if (only.checked) query.set('sessionId', sessionId);
          try {
            /** @type {RecallPage} */
            const page = await api(`/v1/recall?${query}`);
            results.replaceChildren(
              ...(page.items.length === 0 ? [h('li', { class: 'muted' }, 'no hit')] : []),
              ...page.items.map((hit) =>
                h(
                  'li',
                  { class: hit.archived ? 'archived' : '', 'data-event': hit.eventId },
                  h('span', { class: 'kind' }, hit.type),
                  h('a', { href: sessionHref(hit.sessionId) }, hit.sessionId),
                  h('span', { class: 'muted' }, ` ${hit.eventId}`),
                  hit.archived ? h('span', { class: 'badge archived' }, `archived by ${short(hit.compactionId ?? '')}`) : null,
                  h('div', {}, snippet(hit.snippet)),
                ),
              ),
            );
          } catch (err) {
            results.replaceChildren(h('li', { class: 'error' }, String(/** @type {Error} */ (err).message)));
          }
        },
      },
      input,
      h('label', {}, only, ' this session only'),
      h('button', { type: 'submit' }, 'Search'),
    ),
    results,
  );
}

/** @param {string} sessionId @param {string | undefined} selected */
async function renderSession(sessionId, selected) {
  const path = `/v1/sessions/${encodeURIComponent(sessionId)}`;
  /** @type {[SessionSummary, LogEntry[], CompactionItem[]]} */
  const [summary, log, compactions] = await Promise.all([api(path), readLog(sessionId), readCompactions(sessionId)]);
  const byId = new Map(compactions.map((c) => [c.compactionId, c]));
  const diffSlot = h('div', { id: 'diff-slot' });
  const select = (/** @type {string} */ id) => {
    location.hash = `${sessionHref(sessionId)}/c/${encodeURIComponent(id)}`;
  };
  const estimator = compactions[0]?.estimator ?? summary.policy?.estimator ?? 'cl100k_base';
  const rows = compactions.map((c, i) =>
    h(
      'tr',
      { class: `clickable${c.compactionId === selected ? ' selected' : ''}`, 'data-compaction': c.compactionId, onclick: () => select(c.compactionId) },
      h('td', { class: 'num' }, i + 1),
      h('td', { title: c.compactionId }, short(c.compactionId)),
      h('td', {}, c.outcome, c.origin === 'auto' ? h('span', { class: 'badge' }, 'auto') : null),
      h('td', {}, c.strategy.type),
      h('td', { class: 'num' }, `${fmt(c.tokensBefore)} → ${fmt(c.tokensAfter)}`),
      h('td', { class: 'num' }, c.archivedIds.length),
      h('td', { title: when(c.at) }, when(c.at).slice(11)),
    ),
  );
  main.replaceChildren(
    h('p', {}, h('a', { href: '#/' }, '← all sessions')),
    h(
      'section',
      { class: 'panel' },
      h('h1', { id: 'session-title' }, sessionId),
      h(
        'dl',
        { class: 'facts' },
        h('div', {}, h('dt', {}, 'user'), h('dd', {}, summary.userId ?? '—')),
        h('div', {}, h('dt', {}, 'revision'), h('dd', {}, summary.revision)),
        h('div', {}, h('dt', {}, 'events'), h('dd', {}, fmt(summary.eventCount))),
        h('div', {}, h('dt', {}, 'window'), h('dd', {}, `${summary.windowEvents} events, ${fmt(summary.windowTokens)} ${summary.estimator}`)),
        h('div', {}, h('dt', {}, 'compactions'), h('dd', {}, `${summary.compactionCount} (${summary.failedCompactionCount} failed)`)),
        h(
          'div',
          {},
          h('dt', {}, 'policy'),
          h('dd', {}, summary.policy ? `${brief(summary.policy.strategy)} when ${summary.policy.trigger ? brief(summary.policy.trigger) : 'always'}` : 'none'),
        ),
        h('div', {}, h('dt', {}, 'last activity'), h('dd', {}, when(summary.lastActivityAt))),
      ),
    ),
    h(
      'section',
      { class: 'panel' },
      h('h2', {}, `Window size over revisions (${estimator}); dashed lines: compactions`),
      chart(windowCurve(log, estimator), compactions, select),
    ),
    h(
      'div',
      { class: 'grid' },
      h('div', {}, diffSlot, h('section', { class: 'panel' }, h('h2', {}, `Log timeline (${log.length} events)`), timeline(log, byId, select))),
      h(
        'div',
        {},
        h(
          'section',
          { class: 'panel' },
          h('h2', {}, `Compactions (${compactions.length})`),
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
                    h('th', { class: 'num' }, 'tokens'),
                    h('th', { class: 'num' }, 'archived'),
                    h('th', {}, 'at (UTC)'),
                  ),
                ),
                h('tbody', {}, rows),
              ),
        ),
        recallBox(sessionId),
      ),
    ),
  );
  if (selected) {
    /** @type {CompactionDiff} */
    const diff = await api(`${path}/compactions/${encodeURIComponent(selected)}/diff`);
    diffSlot.replaceChildren(diffView(diff, byId.get(selected)));
  }
}

// ---- routing ----------------------------------------------------------------------------------

/** @param {unknown} err */
function fail(err) {
  if (err instanceof NeedsKey) return showKeyPrompt(err.message);
  main.replaceChildren(h('section', { class: 'panel' }, h('p', { class: 'error' }, String(/** @type {Error} */ (err)?.message ?? err))));
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

async function render() {
  const forget = /** @type {HTMLButtonElement} */ (document.getElementById('forget-key'));
  forget.hidden = !sessionStorage.getItem(KEY_STORAGE);
  const match = location.hash.match(/^#\/s\/([^/?]+)(?:\/c\/([^/?]+))?/);
  try {
    /** @type {Schemas['Health']} */
    const health = await fetch('/health').then((r) => r.json());
    /** @type {HTMLElement} */ (document.getElementById('mode')).textContent = health.mode;
    if (match) await renderSession(linkPart(match[1] ?? ''), match[2] ? linkPart(match[2]) : undefined);
    else await renderSessionList();
  } catch (err) {
    fail(err);
  }
}

/** @type {HTMLButtonElement} */ (document.getElementById('forget-key')).addEventListener('click', () => {
  sessionStorage.removeItem(KEY_STORAGE);
  render();
});
window.addEventListener('hashchange', render);
render();
