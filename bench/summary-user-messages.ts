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
 * `- (+N more)`) and that the new summary counts nowhere (`prev counts lost`), and in how many
 * summaries the user messages held and counted under user headings (`userMessagesOf`) outnumber the
 * user messages archived so far in that conversation (`claiming more users than sent`: a count of
 * other items read as one of user messages, newcomer ncverify56 F1).
 * The summary is read back with `libs/compaction/test/summary-reading.ts` (the spec
 * `extractive-sections-counted.spec.ts` reads it so too), replayed with `rolling-passes.ts` there.
 *
 * Needs the shared τ-bench file (`../shared/data`, `SHARED_DIR` overrides); without it, prints one
 * line saying so and exits 0. Run:
 *   npx ts-node --transpile-only -r tsconfig-paths/register bench/summary-user-messages.ts [40 80 …]
 */
import { getEstimator, type SessionEvent } from '@lib/compaction';
import { rollingPasses } from '../libs/compaction/test/rolling-passes';
import { archivedUserMessages, bareLines, counts, keeps, OMITTED, userMessagesOf, type BareLine } from '../libs/compaction/test/summary-reading';
import { loadTauBench, TAU_BENCH_PATH } from './lib/corpus';

/** How many user messages of one kind (archived, or of the summary folded in) the passes saw, and how each was accounted for. */
interface Bucket {
  total: number;
  kept: number;
  counted: number;
  marker: number;
  silent: number;
}

/**
 * Sorts `messages` (bare) into `bucket` by what the summary whose lines are `lines` does with
 * them: kept (whole, shortened at a word, or noted as `(N characters, not shown)`), else counted
 * (up to `count`, the summary's count for their section), else within the compact form's omission
 * marker (`inMarker`), else silent. Returns how many it did not keep (`missing`) and how many went silently.
 */
function tally(bucket: Bucket, messages: readonly string[], lines: readonly BareLine[], count: number, inMarker: boolean): { missing: number; silent: number } {
  const missing = messages.filter((m) => !keeps(lines, m, { notShown: true })).length;
  const counted = Math.min(missing, count);
  const rest = missing - counted;
  bucket.total += messages.length;
  bucket.kept += messages.length - missing;
  bucket.counted += counted;
  if (inMarker) bucket.marker += rest;
  else bucket.silent += rest;
  return { missing, silent: inMarker ? 0 : rest };
}

interface Tally {
  passes: number;
  folding: number;
  archived: Bucket;
  previous: Bucket;
  passesSilent: number;
  prevCountsLost: number;
  overBudget: number;
  overClaimed: number;
}

/** Adds to `t` the rolling-summary passes over one conversation's `events` at `summarizeAtTokens` (cl100k). */
function sweep(events: readonly SessionEvent[], summarizeAtTokens: number, t: Tally): void {
  const estimator = getEstimator('cl100k_base');
  let sent = 0;
  rollingPasses(events, summarizeAtTokens, estimator, (request, text) => {
    t.passes++;
    sent += archivedUserMessages(request).length;
    const claimed = userMessagesOf(text);
    if (new Set(claimed.messages).size + claimed.counted > sent) t.overClaimed++;
    const lines = bareLines(text);
    const compact = !text.startsWith('[Extractive summary');
    const counted = compact ? { users: 0, previous: 0 } : counts(text);
    const inMarker = compact && OMITTED.test(text);
    // the archived user messages
    let silentHere = tally(t.archived, archivedUserMessages(request), lines, counted.users, inMarker).silent;
    // those of the summary folded in
    if (request.currentSummaries.length > 0) {
      t.folding++;
      const prev = userMessagesOf(request.currentSummaries.join('\n'));
      const gone = tally(t.previous, prev.messages, lines, counted.previous, inMarker);
      silentHere += gone.silent;
      // what the folded summary only counted: counted again only if the new previous section's count holds it
      t.prevCountsLost += Math.max(0, prev.counted - Math.max(0, counted.previous - gone.missing));
    }
    if (silentHere > 0) t.passesSilent++;
    if (request.maxSummaryTokens !== undefined && estimator.count(text) > request.maxSummaryTokens) t.overBudget++;
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
    const zero = (): Bucket => ({ total: 0, kept: 0, counted: 0, marker: 0, silent: 0 });
    const t: Tally = { passes: 0, folding: 0, archived: zero(), previous: zero(), passesSilent: 0, prevCountsLost: 0, overBudget: 0, overClaimed: 0 };
    for (const c of conversations) sweep(c.events, at, t);
    const f = (x: Bucket) => `${x.total} (kept ${x.kept}, counted ${x.counted}, in marker ${x.marker}, silent ${x.silent})`;
    console.log(
      `summarizeAtTokens ${at}: ${t.passes} passes (${t.folding} folding), passes with a silent loss ${t.passesSilent}; archived user messages ${f(t.archived)}; previous summary's ${f(t.previous)}; prev counts lost ${t.prevCountsLost}; text over budget ${t.overBudget}; claiming more users than sent ${t.overClaimed}`,
    );
  }
}

main();
