/**
 * Renders a replay report: the per-strategy table (stdout and report.md), report.json, and
 * report.html with an inline SVG chart of the window's tokens turn by turn for a few sessions
 * of each strategy, compactions marked.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ReplayReport, SessionReport, StrategyReport } from './run-replay';
import { ReplayError } from './replay-error';

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** Column headers of the table. */
export const TABLE_HEADERS = [
  'strategy',
  'sessions',
  'events',
  'before sum',
  'before median',
  'before max',
  'after sum',
  'after median',
  'after max',
  'reduction',
  'compactions',
  'summarizer calls',
  'validation failures',
  'wall time',
  'events/s',
];

/** One table row per strategy. */
export function tableRows(report: ReplayReport): string[][] {
  return report.strategies.map((s) => [
    s.name,
    int(s.sessions),
    int(s.events),
    int(s.tokensBefore.sum),
    int(s.tokensBefore.median),
    int(s.tokensBefore.max),
    int(s.tokensAfter.sum),
    int(s.tokensAfter.median),
    int(s.tokensAfter.max),
    pct(s.reduction),
    `${int(s.compactions)}${s.failedCompactions ? ` (+${s.failedCompactions} failed)` : ''}`,
    int(s.summarizerCalls),
    int(s.validationFailures),
    secs(s.wallTimeMs),
    s.eventsPerSecond.toFixed(0),
  ]);
}

function policyText(s: StrategyReport): string {
  const { type, ...params } = s.strategy as unknown as Record<string, unknown>;
  const shown = Object.entries(params)
    .filter(([k]) => k !== 'shadowPrompt' && k !== 'systemPrompt')
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
  return `${type}(${shown}) trigger ${s.trigger ? JSON.stringify(s.trigger) : 'none (every append)'}`;
}

/**
 * The table as a Markdown pipe table (readable as plain text too), followed by the policies and
 * the totals.
 */
export function renderTable(report: ReplayReport): string {
  const rows = [TABLE_HEADERS, ...tableRows(report)];
  const widths = TABLE_HEADERS.map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  const line = (r: string[]) => `| ${r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join(' | ')} |`;
  const sep = `|${widths.map((w, c) => (c === 0 ? ` ${'-'.repeat(w)} ` : ` ${'-'.repeat(w - 1)}: `)).join('|')}|`;
  const out = [
    `Window tokens (${report.estimator}): before = every event appended (no compaction), after = the service's final window, per session.`,
    '',
    line(rows[0]),
    sep,
    ...rows.slice(1).map(line),
    '',
    'Policies:',
    ...report.strategies.map((s) => `  ${s.name}: ${policyText(s)}`),
    '',
    `Total: ${report.validationFailures} validation failures; wall time ${secs(report.wallTimeMs)} (concurrency ${report.concurrency}, ${report.service}).`,
  ];
  for (const w of report.serviceWorkarounds ?? []) out.push(`Worked around: ${w}`);
  for (const s of report.strategies) {
    for (const p of s.problems.slice(0, 5)) out.push(`  ${s.name}: ${p.sessionId} turn ${p.turn} rev ${p.revision}: ${p.code}: ${p.message}`);
    if (!s.settled) out.push(`  ${s.name}: background compactions had not settled when the figures were read`);
  }
  return out.join('\n');
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** An inline SVG line chart of one session: window tokens per turn, tokens without compaction, compactions marked. */
export function sessionChart(session: SessionReport, width = 640, height = 220): string {
  const pad = { left: 56, right: 12, top: 14, bottom: 30 };
  const turns = session.perTurn;
  const maxY = Math.max(1, ...turns.map((t) => Math.max(t.tokens, t.tokensWithoutCompaction)));
  const maxX = Math.max(1, turns.length);
  const x = (turn: number) => pad.left + ((turn - (turns.length > 1 ? 1 : 0)) / Math.max(1, maxX - (turns.length > 1 ? 1 : 0))) * (width - pad.left - pad.right);
  const y = (v: number) => pad.top + (1 - v / maxY) * (height - pad.top - pad.bottom);
  const pts = (f: (t: (typeof turns)[number]) => number) => turns.map((t) => `${x(t.turn).toFixed(1)},${y(f(t)).toFixed(1)}`).join(' ');
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="window tokens per turn of ${escapeHtml(session.sessionId)}">`);
  parts.push(`<rect x="0" y="0" width="${width}" height="${height}" fill="#fff"/>`);
  for (let i = 0; i <= 4; i++) {
    const v = (maxY * i) / 4;
    parts.push(`<line x1="${pad.left}" x2="${width - pad.right}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#eee"/>`);
    parts.push(`<text x="${pad.left - 6}" y="${(y(v) + 4).toFixed(1)}" font-size="10" text-anchor="end" fill="#555">${Math.round(v)}</text>`);
  }
  for (const t of turns) parts.push(`<text x="${x(t.turn).toFixed(1)}" y="${height - pad.bottom + 14}" font-size="10" text-anchor="middle" fill="#555">${t.turn}</text>`);
  parts.push(`<text x="${(width + pad.left) / 2}" y="${height - 4}" font-size="10" text-anchor="middle" fill="#333">turn</text>`);
  for (const m of session.compactionMarks) {
    const cx = x(Math.max(1, m.afterTurn)).toFixed(1);
    const color = m.outcome === 'compacted' ? '#d62728' : '#ff7f0e';
    parts.push(`<line x1="${cx}" x2="${cx}" y1="${pad.top}" y2="${height - pad.bottom}" stroke="${color}" stroke-dasharray="3,3"><title>${escapeHtml(`${m.outcome} ${m.compactionId} after turn ${m.afterTurn}: ${m.tokensBefore ?? '?'} -> ${m.tokensAfter ?? '?'} tokens, ${m.archivedCount ?? '?'} archived`)}</title></line>`);
  }
  parts.push(`<polyline fill="none" stroke="#999" stroke-dasharray="5,4" stroke-width="1.5" points="${pts((t) => t.tokensWithoutCompaction)}"/>`);
  parts.push(`<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="${pts((t) => t.tokens)}"/>`);
  for (const t of turns) parts.push(`<circle cx="${x(t.turn).toFixed(1)}" cy="${y(t.tokens).toFixed(1)}" r="2.5" fill="#1f77b4"><title>turn ${t.turn}: ${t.tokens} tokens (${t.tokensWithoutCompaction} without compaction)</title></circle>`);
  for (const m of session.compactionMarks) {
    const cx = x(Math.max(1, m.afterTurn)).toFixed(1);
    parts.push(`<path d="M ${cx} ${pad.top - 2} l -5 -8 h 10 z" fill="${m.outcome === 'compacted' ? '#d62728' : '#ff7f0e'}"/>`);
  }
  parts.push('</svg>');
  return parts.join('');
}

/** report.md: the table, the policies and the live examples. */
export function renderMarkdown(report: ReplayReport): string {
  return [
    '# Replay report',
    '',
    `File \`${report.file}\`, started ${report.startedAt}, service ${report.service}, estimator ${report.estimator}.`,
    '',
    renderTable(report),
    '',
    '## Live examples',
    '',
    '```',
    ...report.examples.lines,
    '```',
    '',
  ].join('\n');
}

/** report.html: the table and, per strategy, charts of the first `chartSessions` sessions. */
export function renderHtml(report: ReplayReport, chartSessions: number): string {
  const rows = tableRows(report);
  const table = `<table><thead><tr>${TABLE_HEADERS.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>${rows
    .map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`)
    .join('')}</tbody></table>`;
  const sections = report.strategies.map((s) => {
    const charts = s.sessionReports
      .slice(0, chartSessions)
      .map(
        (r) =>
          `<figure>${sessionChart(r)}<figcaption>${escapeHtml(r.sessionId)} (task ${escapeHtml(r.label)}): ${r.turns} turns, ${r.events} events, ${r.compactions} compaction(s), final window ${r.tokensAfter} of ${r.tokensBefore} tokens</figcaption></figure>`,
      )
      .join('\n');
    return `<section><h2>${escapeHtml(s.name)}</h2><p>${escapeHtml(policyText(s))}</p>${charts}</section>`;
  });
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Replay report</title>
<style>body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:first-child,th:first-child{text-align:left}figure{display:inline-block;margin:0 1em 1em 0}figcaption{font-size:12px;color:#444}pre{background:#f6f6f6;padding:1em}</style>
</head><body>
<h1>Replay report</h1>
<p>File <code>${escapeHtml(report.file)}</code>, started ${escapeHtml(report.startedAt)}, service ${escapeHtml(report.service)}, estimator ${escapeHtml(report.estimator)}; ${report.validationFailures} validation failures; wall time ${secs(report.wallTimeMs)}.</p>
${table}
<p>Charts: <span style="color:#1f77b4">&#9632;</span> window tokens after each turn (the service's figure), <span style="color:#999">- -</span> tokens of every event appended so far (no compaction), <span style="color:#d62728">&#9660;</span> a compaction recorded after that turn.</p>
${sections.join('\n')}
<h2>Live examples</h2><pre>${escapeHtml(report.examples.lines.join('\n'))}</pre>
</body></html>
`;
}

/**
 * Writes report.json, report.md and report.html into `dir` (created if needed).
 * @throws ReplayError when the directory cannot be written.
 */
export function writeReports(dir: string, report: ReplayReport, chartSessions: number): void {
  try {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
    fs.writeFileSync(path.join(dir, 'report.md'), renderMarkdown(report));
    fs.writeFileSync(path.join(dir, 'report.html'), renderHtml(report, chartSessions));
  } catch (err) {
    throw new ReplayError(`cannot write the report into ${dir}: ${(err as Error).message}`);
  }
}
