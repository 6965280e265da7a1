/**
 * Figure 6: our planner (`planCompaction`, token-count strategy) on every shared session under a
 * token budget, against LangChain JS `trimMessages` (strategy `last`, `startOn: 'human'`,
 * `includeSystem: true`) with the same token counter (cl100k_base costs of the same formatted
 * lines). Both windows are rendered as OpenAI chat messages and checked with
 * `validateOpenAiWindow`: a window with a problem would be rejected (or misread) by a provider.
 *
 * Two LangChain timings: with a counter that looks up each message's precomputed cost (the same
 * numbers our planner carries; a like-for-like algorithm comparison), and with a counter that
 * tokenizes on every call (what a LangChain user who passes a tokenizer gets).
 */
import { trimMessages, type AIMessage, type BaseMessage } from '@langchain/core/messages';
import { langChainToOpenAi, langChainType as typeOf, toLangChain } from '../lib/langchain-messages';
import { eventCost, getEstimator, parseStrategy, planCompaction, type CostedEvent } from '@lib/compaction';
import { eventsToOpenAiMessages, validateOpenAiWindow } from '@lib/session';
import { loadTauBench, TAU_BENCH_PATH, type Conversation } from '../lib/corpus';
import { nowMs, round } from '../lib/stats';
import { progress, type FigureResult, type FigureRow } from '../lib/report';

/** Options of {@link runPlannerVsLangChain}. */
export interface PlannerOptions {
  /** Timed repetitions over all sessions (the median total is reported). */
  repeats: number;
  /** Sessions timed with the tokenizing LangChain counter (slow: it re-tokenizes every prefix); default all. */
  liveCounterSessions?: number;
  /** Token budgets (maxTokens) to run. */
  budgets?: number[];
}

interface Prepared {
  conversation: Conversation;
  costed: CostedEvent[];
  lc: BaseMessage[];
  costOf: Map<string, number>;
  lastUserContent: string | null;
}

/** Text of a LangChain message formatted like our events, for the tokenizing counter. */
function formattedLine(m: BaseMessage): string {
  const content = typeof m.content === 'string' ? m.content : JSON.stringify(m.content);
  switch (typeOf(m)) {
    case 'system':
      return `System: ${content}`;
    case 'human':
      return `User: ${content}`;
    case 'tool':
      return `Tool [responses: ${content}]`;
    default: {
      const calls = (m as AIMessage).tool_calls ?? [];
      return calls.length
        ? `Assistant: ${content} [tool calls: ${calls.map((c) => `${c.name}(${JSON.stringify(c.args)})`).join(', ')}]`
        : `Assistant: ${content}`;
    }
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** Runs figure 6 (skipped with one line when the shared data is absent). */
export async function runPlannerVsLangChain(options: PlannerOptions): Promise<FigureResult> {
  const conversations = loadTauBench();
  if (!conversations) return { figure: 6, title: 'planner vs LangChain trimMessages', rows: [], skipped: `${TAU_BENCH_PATH} not found (set SHARED_DIR)` };
  const estimator = getEstimator('cl100k_base');
  const prepared: Prepared[] = conversations.map((conversation) => {
    const costs = conversation.events.map((e) => eventCost(e, estimator));
    const { lc, costOf } = toLangChain(conversation.events, costs);
    const lastUser = [...conversation.events].reverse().find((e) => e.type === 'user');
    return {
      conversation,
      costed: conversation.events.map((event, i) => ({ event, tokens: costs[i] })),
      lc,
      costOf,
      lastUserContent: lastUser && lastUser.type === 'user' ? lastUser.text : null,
    };
  });
  const rows: FigureRow[] = [];
  const details: Record<string, unknown> = { sessions: prepared.length };
  for (const budget of options.budgets ?? [2000, 4000]) {
    const strategy = parseStrategy({ type: 'token-count', maxTokens: budget });
    let misses = 0;
    let undefinedSeen = 0;
    const cachedCounter = (msgs: BaseMessage[]) => {
      let total = 0;
      for (const m of msgs) {
        if (m === undefined) {
          undefinedSeen++;
          continue;
        }
        const c = m.id === undefined ? undefined : prepared[currentSession].costOf.get(m.id);
        if (c === undefined) {
          misses++;
          total += estimator.count(formattedLine(m));
        } else total += c;
      }
      return total;
    };
    const liveCounter = (msgs: BaseMessage[]) => msgs.reduce((s, m) => s + (m === undefined ? 0 : estimator.count(formattedLine(m))), 0);
    let currentSession = 0;
    const lcOptions = (tokenCounter: (m: BaseMessage[]) => number) => ({
      maxTokens: budget,
      strategy: 'last' as const,
      startOn: 'human' as const,
      includeSystem: true,
      tokenCounter,
    });

    // Correctness (one untimed pass): validate both windows of every session.
    let oursInvalid = 0;
    let lcInvalid = 0;
    let oursEmpty = 0;
    let lcEmpty = 0;
    let lcUndefinedWindows = 0;
    let oursLostLastUser = 0;
    let lcLostLastUser = 0;
    const lcProblems: Record<string, number> = {};
    let oursTokens = 0;
    let lcTokens = 0;
    for (let i = 0; i < prepared.length; i++) {
      currentSession = i;
      const p = prepared[i];
      const plan = planCompaction(p.costed, strategy, null);
      const kept = new Set(plan.keptIds.length ? plan.keptIds : p.costed.map((c) => c.event.id));
      const keptEvents = p.costed.filter((c) => kept.has(c.event.id));
      oursTokens += keptEvents.reduce((s, c) => s + c.tokens, 0);
      const ours = eventsToOpenAiMessages(keptEvents.map((c) => c.event));
      if (validateOpenAiWindow(ours).length > 0) oursInvalid++;
      if (!ours.some((m) => m.role !== 'system')) oursEmpty++;
      if (p.lastUserContent !== null && !ours.some((m) => m.role === 'user' && m.content === p.lastUserContent)) oursLostLastUser++;

      const trimmed = await trimMessages(p.lc, lcOptions(cachedCounter));
      lcTokens += cachedCounter(trimmed);
      if (trimmed.some((m) => m === undefined)) lcUndefinedWindows++;
      const theirs = langChainToOpenAi(trimmed);
      const problems = validateOpenAiWindow(theirs);
      if (problems.length > 0) {
        lcInvalid++;
        for (const pr of problems) lcProblems[pr.code] = (lcProblems[pr.code] ?? 0) + 1;
      }
      if (!theirs.some((m) => m !== undefined && m.role !== 'system')) lcEmpty++;
      if (p.lastUserContent !== null && !theirs.some((m) => m !== undefined && m.role === 'user' && m.content === p.lastUserContent)) lcLostLastUser++;
    }

    // Timing.
    const oursTimes: number[] = [];
    const lcTimes: number[] = [];
    const lcLiveTimes: number[] = [];
    for (let r = 0; r < options.repeats; r++) {
      let t0 = nowMs();
      for (const p of prepared) planCompaction(p.costed, strategy, null);
      oursTimes.push(nowMs() - t0);
      t0 = nowMs();
      for (let i = 0; i < prepared.length; i++) {
        currentSession = i;
        await trimMessages(prepared[i].lc, lcOptions(cachedCounter));
      }
      lcTimes.push(nowMs() - t0);
      if (r === 0) {
        const subset = prepared.slice(0, options.liveCounterSessions ?? prepared.length);
        t0 = nowMs();
        for (const p of subset) await trimMessages(p.lc, lcOptions(liveCounter));
        lcLiveTimes.push(((nowMs() - t0) * prepared.length) / subset.length);
      }
    }
    const ours = median(oursTimes);
    const lc = median(lcTimes);
    const lcLive = median(lcLiveTimes);
    progress(
      `budget ${budget}: ours ${ours.toFixed(1)} ms, LangChain ${lc.toFixed(1)} ms (tokenizing counter ${lcLive.toFixed(0)} ms); invalid ours ${oursInvalid}, LangChain ${lcInvalid}`,
    );
    rows.push(
      {
        figure: 6,
        metric: `planner, ${prepared.length} sessions, budget ${budget} (ms total)`,
        value: round(ours, 2),
        baseline: round(lc, 2),
        baselineName: 'trimMessages, cached counts',
        ratio: round(lc / ours, 1),
        target: 'faster',
        met: ours < lc,
      },
      {
        figure: 6,
        metric: `  vs trimMessages tokenizing per call (ms total${(options.liveCounterSessions ?? prepared.length) < prepared.length ? `, est. from ${options.liveCounterSessions} sessions` : ''})`,
        value: round(ours, 2),
        baseline: round(lcLive, 1),
        baselineName: 'trimMessages + js-tiktoken',
        ratio: round(lcLive / ours, 0),
      },
      {
        figure: 6,
        metric: `  windows invalid for a provider, budget ${budget}`,
        value: oursInvalid,
        baseline: lcInvalid,
        baselineName: 'trimMessages',
        target: '0 for us',
        met: oursInvalid === 0,
      },
      { figure: 6, metric: `  windows without the newest user message`, value: oursLostLastUser, baseline: lcLostLastUser, baselineName: 'trimMessages' },
    );
    details[`budget${budget}`] = {
      oursMs: oursTimes,
      langChainCachedCounterMs: lcTimes,
      langChainTokenizingCounterMs: lcLiveTimes,
      oursInvalid,
      langChainInvalid: lcInvalid,
      langChainProblems: lcProblems,
      oursEmpty,
      langChainEmpty: lcEmpty,
      langChainWindowsWithUndefined: lcUndefinedWindows,
      oursLostLastUser,
      langChainLostLastUser: lcLostLastUser,
      oursKeptTokens: oursTokens,
      langChainKeptTokens: lcTokens,
      counterCacheMisses: misses,
      undefinedMessagesPassedToCounter: undefinedSeen,
    };
  }
  return {
    figure: 6,
    title: 'planner vs LangChain trimMessages',
    rows,
    details,
    notes: [
      'ratio = LangChain time / our time (higher is better for us); "newest user message" = the last user message of the session, which our guarantee §3.3.2 always keeps',
    ],
  };
}
