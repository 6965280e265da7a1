/**
 * Renders a replay report: the per-strategy table (stdout and report.md), report.json, and
 * report.html with inline SVG charts (strategies side by side, context fidelity, a few chosen
 * sessions turn by turn).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ReplayReport, StrategyReport } from './run-replay';
import { ReplayError } from './replay-error';
import type { FidelityReport } from './fidelity';
import { barChart, boxPlot, escapeHtml, lineChart, SERIES_COLORS } from './svg-charts';

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
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(', ');
  return `${String(type)}(${shown}) trigger ${s.trigger ? JSON.stringify(s.trigger) : 'none (every append)'}`;
}

/**
 * The table as a Markdown pipe table (readable as plain text too), followed by the policies and
 * the totals.
 */
export function renderTable(report: ReplayReport): string {
  const out = [
    `Window tokens (${report.estimator}): before = every event appended (no compaction), after = the service's final window, per session.`,
    '',
    ...pipeTable(TABLE_HEADERS, tableRows(report)),
    '',
    'Policies:',
    ...report.strategies.map((s) => `  ${s.name}: ${policyText(s)}`),
    '',
    `Total: ${report.validationFailures} validation failures; wall time ${secs(report.wallTimeMs)} (concurrency ${report.concurrency}, ${report.service}).`,
  ];
  for (const s of report.strategies) {
    for (const p of s.problems.slice(0, 5)) out.push(`  ${s.name}: ${p.sessionId} turn ${p.turn} rev ${p.revision}: ${p.code}: ${p.message}`);
    if (!s.settled) out.push(`  ${s.name}: background compactions had not settled when the figures were read`);
  }
  return out.join('\n');
}

/** Column headers of the fidelity table. */
export const FIDELITY_HEADERS = [
  'strategy / baseline',
  'sessions',
  'facts',
  'passes (sessions: sum, median, max)',
  'retained in window',
  'retention',
  'recall reach (top 5)',
  'first statement in top 5',
  'archived facts retained',
  'final window tokens (median, max)',
];

/** One fidelity table row per strategy and baseline. */
export function fidelityRows(fidelity: FidelityReport): string[][] {
  return fidelity.rows.map((r) => [
    r.name,
    int(r.sessions),
    int(r.facts),
    r.passes ? `${int(r.passes.sum)}, ${r.passes.median}, ${r.passes.max}` : '—',
    int(r.retained),
    pct(r.retention),
    r.reach === null ? '— (no recall)' : `${pct(r.reach)} (${int(r.reached ?? 0)})`,
    r.reachedFirstStatement === null ? '—' : pct(r.facts ? r.reachedFirstStatement / r.facts : 0),
    r.kind === 'trim-messages'
      ? `— (${int(r.archivedFacts)} dropped)`
      : `${int(r.archivedRetained)} of ${int(r.archivedFacts)} (${pct(r.archivedFacts ? r.archivedRetained / r.archivedFacts : 0)})`,
    `${int(r.windowTokens.median)}, ${int(r.windowTokens.max)}`,
  ]);
}

/** A plain-text pipe table (Markdown), first column left-aligned, the others right-aligned. */
function pipeTable(headers: string[], body: string[][]): string[] {
  const rows = [headers, ...body];
  const widths = headers.map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  const line = (r: string[]) => `| ${r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join(' | ')} |`;
  const sep = `|${widths.map((w, c) => (c === 0 ? ` ${'-'.repeat(w)} ` : ` ${'-'.repeat(w - 1)}: `)).join('|')}|`;
  return [line(rows[0]), sep, ...rows.slice(1).map(line)];
}

/** The fidelity section as text: what was measured, the table, and the retention by passes. */
export function renderFidelity(fidelity: FidelityReport): string {
  const passRows = fidelity.rows.filter((r) => r.byPasses.length > 0);
  const labels = passRows[0]?.byPasses.map((b) => b.passes) ?? [];
  const byPasses = pipeTable(
    ['retention by passes the fact went through', ...labels.map((l) => `${l} passes`)],
    passRows.map((r) => [r.name, ...r.byPasses.map((b) => (b.facts ? `${pct(b.retained / b.facts)} of ${b.facts}` : '—'))]),
  );
  return [
    `Context fidelity (${fidelity.summarizer}): facts of the conversations (ids, dates, amounts, names from user messages, tool arguments and tool results),`,
    'checked at the end of each session: retained = mentioned in the final window (summary included); recall reach = a recall for the fact (top 5, the session)',
    'answers the event where the fact first appears (the first event after the system message holding its words); first statement = the first user message,',
    `tool call or tool result stating it literally is among those 5 too. Passes = compactions after the fact's event.`,
    '',
    ...pipeTable(FIDELITY_HEADERS, fidelityRows(fidelity)),
    '',
    ...byPasses,
    '',
    ...fidelity.rows.filter((r) => r.kind !== 'strategy').map((r) => `  ${r.name}: ${r.note}`),
    ...fidelity.notes.map((n) => `  ${n}`),
    ...fidelity.rows.flatMap((r) =>
      r.reachMisses.map((m) => `  recall missed (${r.name}): ${m.kind} "${m.value}" of message ${m.messageIndex} in ${m.sessionId}`),
    ),
  ].join('\n');
}

/** The report's title: says which summarizer wrote the summaries. */
export function reportTitle(report: ReplayReport): string {
  return `Replay report: ${report.summarizer}`;
}

/** report.md: the table, the policies, the fidelity section and the live examples. */
export function renderMarkdown(report: ReplayReport): string {
  return [
    `# ${reportTitle(report)}`,
    '',
    `File \`${report.file}\`, started ${report.startedAt}, service ${report.service}, estimator ${report.estimator}.`,
    '',
    renderTable(report),
    '',
    ...(report.fidelity ? ['## Context fidelity', '', renderFidelity(report.fidelity), ''] : []),
    '## Live examples',
    '',
    '```',
    ...report.examples.lines,
    '```',
    '',
  ].join('\n');
}

/**
 * Sessions worth charting side by side: `count` sessions that compact under every strategy
 * (else under the most strategies), spread from the median length to the longest.
 */
export function chosenSessions(report: ReplayReport, count: number): number[] {
  const n = report.strategies[0]?.sessionReports.length ?? 0;
  const compactingUnder = (i: number) => report.strategies.filter((s) => (s.sessionReports[i]?.compactions ?? 0) > 0).length;
  const best = Math.max(0, ...Array.from({ length: n }, (_, i) => compactingUnder(i)));
  if (best === 0) return [];
  const pool = Array.from({ length: n }, (_, i) => i)
    .filter((i) => compactingUnder(i) === best)
    .sort((a, b) => report.strategies[0].sessionReports[a].tokensBefore - report.strategies[0].sessionReports[b].tokensBefore || a - b);
  const picks = new Set<number>();
  for (let k = 0; k < Math.min(count, pool.length); k++) {
    const q = count === 1 ? 0.5 : 0.5 + (0.5 * k) / (count - 1);
    picks.add(pool[Math.round(q * (pool.length - 1))]);
  }
  for (const i of pool) if (picks.size < Math.min(count, pool.length)) picks.add(i);
  return [...picks];
}

const pctFormat = (v: number) => `${Number((v * 100).toFixed(1))}%`;
const tokenFormat = (v: number) => Math.round(v).toLocaleString('en-US');

/** The charts comparing strategies over every session: tokens saved, and the distribution of final window sizes. */
function strategyCharts(report: ReplayReport): string[] {
  const names = report.strategies.map((s) => s.name);
  return [
    barChart({
      title: 'Tokens saved: 1 − (final windows) / (every event appended), all sessions',
      yLabel: 'tokens saved',
      categories: names,
      series: [{ name: 'tokens saved', values: report.strategies.map((s) => s.reduction) }],
      format: pctFormat,
      height: 300,
    }),
    boxPlot({
      title: `Final window size per session (${report.strategies[0]?.sessions ?? 0} sessions): min, 25%, median, 75%, max`,
      yLabel: `window tokens (${report.estimator})`,
      boxes: [
        { label: 'no compaction', values: report.strategies[0]?.sessionReports.map((r) => r.tokensBefore) ?? [], color: '#bab0ac' },
        ...report.strategies.map((s, k) => ({
          label: s.name,
          values: s.sessionReports.map((r) => r.tokensAfter),
          color: SERIES_COLORS[k % SERIES_COLORS.length],
        })),
      ],
      format: tokenFormat,
    }),
  ];
}

/** One chart per chosen session: window tokens after each turn, one line per strategy, and the window without compaction. */
function sessionCharts(report: ReplayReport, count: number): string[] {
  return chosenSessions(report, count).map((i) => {
    const first = report.strategies[0].sessionReports[i];
    const turns = first.perTurn.map((t) => `${t.turn}`);
    const chart = lineChart({
      title: `Session [${i}] (task ${first.label}): window tokens after each turn`,
      xLabel: 'turn',
      yLabel: `window tokens (${report.estimator})`,
      xs: turns,
      series: [
        { name: 'no compaction', points: first.perTurn.map((t) => t.tokensWithoutCompaction), color: '#999', dashed: true },
        ...report.strategies.map((s, k) => ({
          name: `${s.name} (${s.sessionReports[i].compactions} compactions)`,
          points: s.sessionReports[i].perTurn.map((t) => t.tokens),
          color: SERIES_COLORS[k % SERIES_COLORS.length],
        })),
      ],
      format: tokenFormat,
    });
    return `<figure>${chart}<figcaption>${first.turns} turns, ${first.events} events, ${tokenFormat(first.tokensBefore)} tokens without compaction; final windows: ${report.strategies.map((s) => `${escapeHtml(s.name)} ${tokenFormat(s.sessionReports[i].tokensAfter)}`).join(', ')}. Compactions run in the background after the turn that triggers them: a drop shows in the next turn's window.</figcaption></figure>`;
  });
}

/** The fidelity charts: retention (and reach) by strategy and baseline, retention against passes. */
function fidelityCharts(fidelity: FidelityReport): string[] {
  const rows = fidelity.rows;
  const strategies = rows.filter((r) => r.kind === 'strategy');
  const labels = strategies[0]?.byPasses.map((b) => b.passes) ?? [];
  const point = (b: { facts: number; retained: number }) => (b.facts >= 10 ? b.retained / b.facts : null);
  return [
    barChart({
      title: `Facts retained in the final window, and reached by recall (top 5), ${rows[0]?.facts ?? 0} facts`,
      yLabel: 'share of facts',
      categories: rows.map((r) => r.name.replace(/, first 12,000 chars$/, ' on the first 12k chars')),
      series: [
        { name: 'retained in the window', values: rows.map((r) => r.retention), color: SERIES_COLORS[0] },
        { name: 'reached by recall', values: rows.map((r) => r.reach), color: SERIES_COLORS[2] },
      ],
      format: pctFormat,
      yMax: 1,
      height: 360,
    }),
    lineChart({
      title: 'Retention against the number of compaction passes the fact went through (points with ≥ 10 facts)',
      xLabel: 'passes (compactions after the fact was stated)',
      yLabel: 'facts retained in the window',
      xs: labels,
      series: [
        ...strategies.map((r, k) => ({ name: r.name, points: r.byPasses.map(point), color: SERIES_COLORS[k % SERIES_COLORS.length] })),
        ...rows
          .filter((r) => r.kind === 'first-chars')
          .map((r) => ({
            name: r.name.replace(/, first 12,000 chars$/, ' (first 12k chars)'),
            points: r.byPasses.map(point),
            color: SERIES_COLORS[strategies.findIndex((s) => r.name.startsWith(s.name)) % SERIES_COLORS.length],
            dashed: true,
          })),
      ],
      format: pctFormat,
      yMax: 1,
    }),
  ];
}

function htmlTable(headers: string[], rows: string[][]): string {
  return `<div class="table"><table><thead><tr>${headers.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>${rows
    .map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`)
    .join('')}</tbody></table></div>`;
}

/** report.html: the tables, charts comparing the strategies, `chartSessions` chosen sessions, the fidelity charts. */
export function renderHtml(report: ReplayReport, chartSessions: number): string {
  const title = reportTitle(report);
  const policies = report.strategies.map((s) => `<li><b>${escapeHtml(s.name)}</b>: ${escapeHtml(policyText(s))}</li>`).join('');
  const fidelity = report.fidelity;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1220px}.table{overflow-x:auto}table{border-collapse:collapse;font-size:13px;width:100%}td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}td{white-space:nowrap}th{background:#f3f3f3;font-weight:600;vertical-align:bottom}td:first-child,th:first-child{text-align:left;white-space:nowrap}figure{margin:0 0 20px 0}figcaption{font-size:13px;color:#444;max-width:1180px}pre{background:#f6f6f6;padding:1em;overflow-x:auto;font-size:12px}svg{display:block;max-width:100%;height:auto}</style>
</head><body>
<h1>${escapeHtml(title)}</h1>
<p>File <code>${escapeHtml(report.file)}</code>, started ${escapeHtml(report.startedAt)}, service ${escapeHtml(report.service)}, estimator ${escapeHtml(report.estimator)}; ${report.validationFailures} validation failures; wall time ${secs(report.wallTimeMs)}. Before = every event appended (no compaction); after = the service's final window, per session.</p>
${htmlTable(TABLE_HEADERS, tableRows(report))}
<ul>${policies}</ul>
<h2>Strategies side by side</h2>
${strategyCharts(report)
  .map((c) => `<figure>${c}</figure>`)
  .join('\n')}
${
  fidelity
    ? `<h2>Context fidelity</h2>
<p>${escapeHtml(renderFidelity(fidelity).split('\n').slice(0, 3).join(' '))}</p>
${htmlTable(FIDELITY_HEADERS, fidelityRows(fidelity))}
<ul>${fidelity.rows
        .filter((r) => r.kind !== 'strategy')
        .map((r) => `<li><b>${escapeHtml(r.name)}</b>: ${escapeHtml(r.note)}</li>`)
        .join('')}${fidelity.notes.map((n) => `<li>${escapeHtml(n)}</li>`).join('')}</ul>
${fidelityCharts(fidelity)
  .map((c) => `<figure>${c}</figure>`)
  .join('\n')}`
    : ''
}
<h2>Chosen sessions</h2>
<p>${chosenSessions(report, 1).length ? 'Sessions that compact under as many strategies as any session does, from the median length to the longest.' : 'No session compacted.'}</p>
${sessionCharts(report, chartSessions).join('\n')}
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
