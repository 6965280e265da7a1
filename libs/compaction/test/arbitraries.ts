/**
 * fast-check arbitraries for random session histories and strategies (property tests).
 *
 * A history is built from a random list of operations: user / assistant text / assistant with
 * 1–3 tool calls (parallel when > 1) / a tool event answering 1–2 pending calls (so responses can
 * land right after their call, turns later, or never: open calls) / stored system message
 * (anywhere) / system notice (anywhere) / existing summary (anywhere).
 */
import fc from 'fast-check';
import type { SessionEvent, Strategy, Trigger } from '../src';
import { DEFAULT_SHADOW_PROMPT, DEFAULT_SUMMARIZER_SYSTEM_PROMPT } from '../src';

type Op =
  | { k: 'user'; text: string | null }
  | { k: 'assistant'; text: string | null }
  | { k: 'calls'; n: number; text: string | null }
  | { k: 'respond'; n: number; pick: number }
  | { k: 'system'; text: string }
  | { k: 'notice'; text: string }
  | { k: 'summary'; text: string };

const text = fc.string({ minLength: 0, maxLength: 24 });
const nullableText = fc.option(text, { freq: 8 });

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: nullableText.map((t) => ({ k: 'user' as const, text: t })) },
  { weight: 5, arbitrary: nullableText.map((t) => ({ k: 'assistant' as const, text: t })) },
  { weight: 3, arbitrary: fc.record({ n: fc.integer({ min: 1, max: 3 }), text: nullableText }).map((r) => ({ k: 'calls' as const, ...r })) },
  { weight: 4, arbitrary: fc.record({ n: fc.integer({ min: 1, max: 2 }), pick: fc.nat(10) }).map((r) => ({ k: 'respond' as const, ...r })) },
  { weight: 1, arbitrary: text.map((t) => ({ k: 'system' as const, text: t })) },
  { weight: 1, arbitrary: text.map((t) => ({ k: 'notice' as const, text: t })) },
  { weight: 1, arbitrary: text.map((t) => ({ k: 'summary' as const, text: `sum ${t}` })) },
);

/** Builds the events of a list of operations (ids e0, e1, …; call ids c0, c1, …). */
export function buildHistory(ops: Op[]): SessionEvent[] {
  const events: SessionEvent[] = [];
  const pending: { id: string; name: string }[] = [];
  let calls = 0;
  for (const o of ops) {
    const id = `e${events.length}`;
    switch (o.k) {
      case 'user':
        events.push({ id, type: 'user', text: o.text });
        break;
      case 'assistant':
        events.push({ id, type: 'assistant', text: o.text });
        break;
      case 'calls': {
        const toolCalls = Array.from({ length: o.n }, () => {
          const c = { id: `c${calls++}`, name: `tool${calls % 3}`, arguments: `{"n":${calls}}` };
          pending.push({ id: c.id, name: c.name });
          return c;
        });
        events.push({ id, type: 'assistant', text: o.text, toolCalls });
        break;
      }
      case 'respond': {
        if (pending.length === 0) break;
        const answered = [];
        for (let i = 0; i < o.n && pending.length > 0; i++) answered.push(pending.splice((o.pick + i) % pending.length, 1)[0]);
        events.push({ id, type: 'tool', responses: answered.map((c) => ({ toolCallId: c.id, name: c.name, data: `r-${c.id}` })) });
        break;
      }
      case 'system':
        events.push({ id, type: 'system', text: o.text });
        break;
      case 'notice':
        events.push({ id, type: 'system', text: o.text, notice: true });
        break;
      case 'summary':
        events.push({ id, type: 'summary', shadowPrompt: DEFAULT_SHADOW_PROMPT, text: o.text });
        break;
    }
  }
  return events;
}

/** Random histories of up to `maxOps` operations. */
export function historyArb(maxOps = 40): fc.Arbitrary<SessionEvent[]> {
  return fc.array(op, { minLength: 0, maxLength: maxOps }).map(buildHistory);
}

const prompts = { shadowPrompt: DEFAULT_SHADOW_PROMPT, systemPrompt: DEFAULT_SUMMARIZER_SYSTEM_PROMPT };

/** Random, valid strategies of each type (token figures in `chars`, i.e. UTF-16 code units). */
export const strategyArbs: Record<Strategy['type'], fc.Arbitrary<Strategy>> = {
  'sliding-window': fc.integer({ min: 1, max: 12 }).map((maxEvents) => ({ type: 'sliding-window' as const, maxEvents })),
  'turn-window': fc.integer({ min: 1, max: 6 }).map((maxTurns) => ({ type: 'turn-window' as const, maxTurns })),
  'token-count': fc.integer({ min: 1, max: 400 }).map((maxTokens) => ({ type: 'token-count' as const, maxTokens })),
  'recursive-summarization': fc
    .integer({ min: 1, max: 12 })
    .chain((maxEventsToKeep) =>
      fc
        .integer({ min: 0, max: maxEventsToKeep - 1 })
        .map((overlapSize) => ({ type: 'recursive-summarization' as const, maxEventsToKeep, overlapSize, ...prompts })),
    ),
  'rolling-summary': fc
    .record({ keepTurns: fc.integer({ min: 1, max: 5 }), summarizeAtTokens: fc.integer({ min: 1, max: 300 }) })
    .map((r) => ({ type: 'rolling-summary' as const, ...r, ...prompts })),
};

/** Random, valid triggers (nested any-of / all-of up to depth 3). */
export const triggerArb: fc.Arbitrary<Trigger> = fc.letrec<{ t: Trigger }>((tie) => ({
  t: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.integer({ min: 1, max: 8 }).map((maxTurns) => ({ type: 'turn-count' as const, maxTurns })),
    fc.integer({ min: 1, max: 500 }).map((threshold) => ({ type: 'token-count' as const, threshold })),
    fc.array(tie('t'), { minLength: 1, maxLength: 3 }).map((triggers) => ({ type: 'any-of' as const, triggers })),
    fc.array(tie('t'), { minLength: 1, maxLength: 3 }).map((triggers) => ({ type: 'all-of' as const, triggers })),
  ),
})).t;
