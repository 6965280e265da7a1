/**
 * Sweep (newcomer report on rolling summaries at small budgets): does a budgeted extractive summary
 * leave out a user message without a count?
 *
 * Replays the 150 shared τ-bench conversations event by event with `rolling-summary` (`keepTurns`
 * 2, `summarizeAtTokens` 40, 80, 150, 300, 600; cl100k), summarizing every pass that fires with the
 * extractive summarizer and folding its summary into the next pass, as the service does. For each
 * pass it counts the user messages of its input, the archived ones (repeated ones in a row folded,
 * as the summary writes them) and those of the summary it folds in (lines under a "User messages"
 * or "Earlier user messages" heading, and `User: …` lines), and sorts each into: kept (whole, or
 * shortened at a word, in any section), counted (its section's `(+N more)` counts it, or the
 * `Left out:` line for a section of which none is kept), within an
 * omission marker (the compact form's `[… N characters omitted …]`), or silent (none of these).
 * Also prints how many user messages the folded summary had only counted (its users'
 * `- (+N more)`) and that the new summary counts nowhere (`prev counts lost`).
 *
 * Needs the shared τ-bench file (`../shared/data`, `SHARED_DIR` overrides); without it, prints one
 * line saying so and exits 0. Run:
 *   npx ts-node --transpile-only -r tsconfig-paths/register bench/summary-user-messages.ts [40 80 …]
 */
import { completePlan, costEvents, extractiveSummary, getEstimator, parseStrategy, planCompaction, type SessionEvent } from '@lib/compaction';
import { foldRepeatedUserMessages, repeatedMessage } from '../libs/compaction/src/repeated-user-messages';
import { loadTauBench, TAU_BENCH_PATH } from './lib/corpus';

const USER_HEADINGS = new Set(['User messages (oldest first):', 'Earlier user messages:']);
const OMITTED = /\[… \d+ characters omitted …\]/;
const COUNT = /^(?:- )?\(\+(\d+) more\)$/;

/** A line as the sections write a message: without `- `, `User: `, and a shortening's ` …`. */
function bare(line: string): { text: string; shortened: boolean } {
  let t = line
    .trim()
    .replace(/^- /, '')
    .replace(/^User: /, '');
  const shortened = t.endsWith(' …');
  if (shortened) t = t.slice(0, -2);
  return { text: t, shortened };
}

/** Whether `message` (bare) is in `summary`, whole or shortened at a word, on a line of its own. */
function kept(message: string, lines: readonly { text: string; shortened: boolean }[]): boolean {
  return lines.some(
    (l) => l.text === message || (l.shortened && l.text.length > 0 && message.startsWith(l.text)) || l.text === `(${message.length} characters, not shown)`,
  );
}

/** The blocks of a sectioned summary by title, and their `(+N more)`. */
function sectionCounts(summary: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const block of summary.split('\n\n')) {
    const lines = block.split('\n');
    const last = COUNT.exec(lines[lines.length - 1].trim());
    counts.set(lines[0], last ? Number(last[1]) : 0);
    // the sections of which none is kept (`Left out: 10 previous summary lines, 2 tools`)
    if (lines[0].startsWith('Left out: ')) {
      for (const m of lines[0].matchAll(/(\d+) (previous summary lines?|user messages?)/g))
        counts.set(m[2].startsWith('user') ? 'User messages (oldest first):' : 'Previous summary (merged):', Number(m[1]));
    }
  }
  return counts;
}

/** The user messages a folded summary holds (bare), and how many it only counted. */
function previousUserMessages(previous: string): { messages: string[]; counted: number } {
  const messages: string[] = [];
  let counted = 0;
  let heading = '';
  for (const raw of previous.split('\n')) {
    const line = raw.trim();
    if (line === '') {
      heading = '';
      continue;
    }
    if (/^[A-Z][^:]*:$/.test(line) && !line.startsWith('- ')) {
      heading = line;
      continue;
    }
    const leftOut = /^Left out: .*?(\d+) user messages?/.exec(line);
    if (leftOut) counted += Number(leftOut[1]);
    const count = COUNT.exec(line);
    if (count) {
      if (USER_HEADINGS.has(heading)) counted += Number(count[1]);
      continue;
    }
    if ((USER_HEADINGS.has(heading) && line.startsWith('- ')) || line.startsWith('User: ') || line.startsWith('- User: ')) messages.push(bare(line).text);
  }
  return { messages, counted };
}

interface Tally {
  passes: number;
  folding: number;
  archived: { total: number; kept: number; counted: number; marker: number; silent: number };
  previous: { total: number; kept: number; counted: number; marker: number; silent: number };
  passesSilent: number;
  prevCountsLost: number;
  overBudget: number;
}

function sweep(events: readonly SessionEvent[], summarizeAtTokens: number, t: Tally): void {
  const estimator = getEstimator('cl100k_base');
  const strategy = parseStrategy({ type: 'rolling-summary', keepTurns: 2, summarizeAtTokens });
  let window: SessionEvent[] = [];
  events.forEach((event, i) => {
    window.push(event);
    const plan = planCompaction(costEvents(window, estimator), strategy);
    const request = plan.summaryRequest;
    if (request === undefined) return;
    const text = extractiveSummary(request, { estimator });
    t.passes++;
    const lines = text.split('\n').map(bare);
    const counts = sectionCounts(text);
    const compact = !text.startsWith('[Extractive summary');
    const marker = OMITTED.test(text);
    let silentHere = 0;
    // the archived user messages
    const archived = foldRepeatedUserMessages(request.toSummarize).flatMap((e) => (e.user ? [repeatedMessage(e.user.text, e.user.times)] : []));
    const missing = archived.filter((m) => !kept(m, lines));
    const usersCount = compact ? 0 : (counts.get('User messages (oldest first):') ?? 0);
    t.archived.total += archived.length;
    t.archived.kept += archived.length - missing.length;
    const counted = Math.min(missing.length, usersCount);
    t.archived.counted += counted;
    const rest = missing.length - counted;
    if (marker && compact) t.archived.marker += rest;
    else {
      t.archived.silent += rest;
      silentHere += rest;
    }
    // those of the summary folded in
    if (request.currentSummaries.length > 0) {
      t.folding++;
      const prev = previousUserMessages(request.currentSummaries.join('\n'));
      const gone = prev.messages.filter((m) => !kept(m, lines));
      const prevCount = compact ? 0 : (counts.get('Previous summary (merged):') ?? 0);
      t.previous.total += prev.messages.length;
      t.previous.kept += prev.messages.length - gone.length;
      const c = Math.min(gone.length, prevCount);
      t.previous.counted += c;
      const r = gone.length - c;
      if (marker && compact) t.previous.marker += r;
      else {
        t.previous.silent += r;
        silentHere += r;
      }
      // what the folded summary only counted: counted again only if the new previous section's count holds it
      t.prevCountsLost += Math.max(0, prev.counted - Math.max(0, prevCount - gone.length));
    }
    if (silentHere > 0) t.passesSilent++;
    const result = completePlan(plan, { reply: { text }, summaryId: `s${i}`, estimator });
    if (request.maxSummaryTokens !== undefined && result.summary && estimator.count(text) > request.maxSummaryTokens) t.overBudget++;
    const byId = new Map(window.map((e) => [e.id, e]));
    byId.set(result.summary!.id, { id: result.summary!.id, type: 'summary', shadowPrompt: result.summary!.shadowPrompt, text });
    window = result.keptIds.map((id) => byId.get(id)!);
  });
}

function main(): void {
  const conversations = loadTauBench();
  if (!conversations) {
    console.log(`no τ-bench file at ${TAU_BENCH_PATH}: nothing to sweep`);
    return;
  }
  const budgets = process.argv.slice(2).map(Number);
  for (const at of budgets.length > 0 ? budgets : [40, 80, 150, 300, 600]) {
    const zero = () => ({ total: 0, kept: 0, counted: 0, marker: 0, silent: 0 });
    const t: Tally = { passes: 0, folding: 0, archived: zero(), previous: zero(), passesSilent: 0, prevCountsLost: 0, overBudget: 0 };
    for (const c of conversations) sweep(c.events, at, t);
    const f = (x: Tally['archived']) => `${x.total} (kept ${x.kept}, counted ${x.counted}, in marker ${x.marker}, silent ${x.silent})`;
    console.log(
      `summarizeAtTokens ${at}: ${t.passes} passes (${t.folding} folding), passes with a silent loss ${t.passesSilent}; archived user messages ${f(t.archived)}; previous summary's ${f(t.previous)}; prev counts lost ${t.prevCountsLost}; text over budget ${t.overBudget}`,
    );
  }
}

main();
