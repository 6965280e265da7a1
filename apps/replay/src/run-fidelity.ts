/**
 * The fidelity section of a replay run (issue 16): {@link FidelityCollector} measures each
 * replayed session at its end (called by the replay once the session's compactions settled), then
 * adds the baselines and aggregates one row per strategy and baseline. See fidelity.ts for what
 * is measured.
 */
import { computeEventCosts } from '../../../libs/session/src/domain/event-costs';
import { summarizerFromEnv } from '../../../libs/session/src/summarizers/summarizer-config';
import type { Summarizer } from '../../../libs/session/src/summarizers/summarizer';
import type { EstimatorName, SessionEvent } from '@lib/compaction';
import { extractFacts, type Fact } from './fact-extraction';
import {
  baselineRow,
  firstCharsBaseline,
  measureSession,
  readFinalWindow,
  strategyRow,
  trimBaseline,
  FIRST_CHARS_BASELINE,
  type FidelityReport,
  type FidelityRow,
  type LoggedEvent,
  type SessionFidelity,
} from './fidelity';
import type { ReplayPlan } from './policy-forms';
import type { SummarizerDescription } from './summarizer-description';
import { sessionEvents } from './sessions-file';
import type { SessionServiceClient } from '@lib/client';

export type { FidelityReport } from './fidelity';

/** Budget of the trimMessages baseline when no token-count plan gives one (tokens). */
export const DEFAULT_TRIM_BUDGET = 2000;

const SUMMARIZING = new Set(['recursive-summarization', 'rolling-summary']);

/** Measures fidelity during a replay and builds its report section. */
export class FidelityCollector {
  /** Facts of each measured session. */
  readonly facts: Fact[][];
  private readonly events: SessionEvent[][];
  /** The summarizer of the "first characters" baseline; undefined against another process's service (the baseline is left out). */
  private readonly summarizer: Summarizer | undefined;
  private readonly measured = new Map<string, SessionFidelity[]>();
  private readonly firstChars = new Map<string, Array<{ retained: boolean[]; tokens: number; compared: SessionFidelity } | null>>();

  /**
   * @param sessions the conversations replayed (OpenAI messages); the first `count` are measured.
   * @param env where the summarizer of the "first characters" baseline is configured (the same
   *   variables as the service's: `OPENAI_BASE_URL`, `SUMMARIZER_MODEL`, …): the in-process
   *   service's summarizer, started with the same environment.
   * @param serviceUrl the service replayed against with `--url`, whose summarizer this process
   *   cannot call: the "first characters" baseline is left out (a line of the section says why).
   */
  constructor(
    sessions: ReadonlyArray<{ messages: Record<string, unknown>[] }>,
    readonly count: number,
    private readonly estimator: EstimatorName,
    env: NodeJS.ProcessEnv = process.env,
    private readonly serviceUrl?: string,
  ) {
    const measured = sessions.slice(0, count);
    this.facts = measured.map((s) => extractFacts(s.messages));
    this.events = measured.map((s) => sessionEvents(s.messages));
    this.summarizer = serviceUrl === undefined ? summarizerFromEnv(env) : undefined;
  }

  /**
   * Measures session `index` of `plan` (replayed as `sessionId`) at its end. `logged[i]` is the
   * log entry of message i; `compactionPositions` the global positions of the compactions that
   * compacted. Sessions past `count` are ignored.
   */
  async measure(
    client: SessionServiceClient,
    plan: ReplayPlan,
    index: number,
    sessionId: string,
    logged: readonly LoggedEvent[],
    compactionPositions: readonly string[],
  ): Promise<void> {
    if (index >= this.count) return;
    const window = await readFinalWindow(client, sessionId, this.estimator);
    const result = await measureSession(client, sessionId, this.facts[index], logged, compactionPositions, window);
    if (!this.measured.has(plan.name)) this.measured.set(plan.name, new Array(this.count));
    this.measured.get(plan.name)![index] = result;
    if (this.summarizer && SUMMARIZING.has(plan.strategy.type)) {
      const archived = this.events[index].filter((_, i) => logged[i]?.archived === true);
      const retained = await firstCharsBaseline(this.summarizer, archived, window, this.facts[index]);
      if (!this.firstChars.has(plan.name)) this.firstChars.set(plan.name, new Array(this.count).fill(null));
      // nothing archived (or the summarizer failed): the baseline's window is the strategy's
      this.firstChars.get(plan.name)![index] = { retained: retained ?? result.facts.map((f) => f.retained), tokens: window.tokens, compared: result };
    }
  }

  /**
   * The section: a row per strategy (in plan order), the trimMessages baseline, a "first
   * characters" row per summarizing strategy (in process; against `serviceUrl` a note instead).
   * @param summarizer the summarizer that wrote the strategies' summaries (the report's title's).
   */
  async report(plans: readonly ReplayPlan[], wallTimeMs: number, summarizer: SummarizerDescription): Promise<FidelityReport> {
    const tokenCount = plans.find((p) => p.strategy.type === 'token-count');
    const trimBudget = tokenCount && tokenCount.strategy.type === 'token-count' ? tokenCount.strategy.maxTokens : DEFAULT_TRIM_BUDGET;
    const rows: FidelityRow[] = [];
    for (const plan of plans) {
      const sessions = this.measured.get(plan.name) ?? [];
      rows.push(
        strategyRow(plan.name, `${plan.strategy.type}, ${plan.trigger ? `trigger ${JSON.stringify(plan.trigger)}` : 'no trigger'}`, sessions.filter(Boolean)),
      );
    }
    const trimmed = [];
    for (const [i, events] of this.events.entries()) {
      const costs = events.map((e) => computeEventCosts(e)[this.estimator]);
      trimmed.push(await trimBaseline(events, costs, this.facts[i], trimBudget));
    }
    rows.push(
      baselineRow(
        `trimMessages ${trimBudget}`,
        'trim-messages',
        `LangChain trimMessages, strategy last, ${trimBudget} tokens, whole conversation; dropped facts lost (no recall)`,
        trimmed,
      ),
    );
    const notes: string[] = [];
    if (this.serviceUrl !== undefined && plans.some((p) => SUMMARIZING.has(p.strategy.type)))
      notes.push(
        `first ${FIRST_CHARS_BASELINE.toLocaleString('en-US')} chars baseline: left out: its summary must come from the summarizer that wrote the strategies' summaries, and that is the service's at ${this.serviceUrl}, which this process cannot call (replay without --url to get it)`,
      );
    for (const plan of plans) {
      if (this.summarizer === undefined) break;
      const seeded = (this.firstChars.get(plan.name) ?? []).filter((x): x is NonNullable<typeof x> => x !== null);
      if (!SUMMARIZING.has(plan.strategy.type)) continue;
      rows.push(
        baselineRow(
          `${plan.name}, first ${FIRST_CHARS_BASELINE.toLocaleString('en-US')} chars`,
          'first-chars',
          `the ${plan.name} final window with its summary replaced by the same summarizer's summary of the first ${FIRST_CHARS_BASELINE} characters of the archived text (a session that archived nothing keeps its window)`,
          seeded,
        ),
      );
    }
    return { summarizer: summarizer.text, modelSummarizer: summarizer.model, trimBudget, rows, notes, wallTimeMs };
  }
}
