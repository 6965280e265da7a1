/**
 * The conversations the benchmarks replay: the 150 real agent sessions of the shared τ-bench
 * file (OpenAI chat format) converted to native session events, or, when the shared folder is
 * absent, a small synthetic corpus with the same event mix (so the service figures still run).
 *
 * {@link EventCycler} turns the corpus into an endless stream of events with unique ids and
 * unique tool-call ids, for building long logs.
 */
import * as fs from 'node:fs';
import type { SessionEvent } from '@lib/compaction';
import { computeEventCosts, openAiMessagesToEvents, type EventCosts } from '@lib/session';
import { TAU_BENCH_FILE } from '../../test/support/shared-dir';

/** One conversation: its task id, the raw OpenAI messages and the converted native events. */
export interface Conversation {
  taskId: string;
  messages: Record<string, unknown>[];
  events: SessionEvent[];
}

/** Where the shared τ-bench file is expected (see test/support/shared-dir.ts; `SHARED_DIR` overrides). */
export const TAU_BENCH_PATH = TAU_BENCH_FILE;

/** True when the shared τ-bench conversations are available. */
export function tauBenchAvailable(): boolean {
  return fs.existsSync(TAU_BENCH_FILE);
}

let tauCache: Conversation[] | null = null;

/**
 * The shared τ-bench sessions as {@link Conversation}s, or null when the file is absent.
 * @throws the converter's error if a message of the file is malformed.
 */
export function loadTauBench(): Conversation[] | null {
  if (tauCache) return tauCache;
  if (!tauBenchAvailable()) return null;
  const raw = JSON.parse(fs.readFileSync(TAU_BENCH_FILE, 'utf8')) as Array<{ task_id: number | string; traj: Record<string, unknown>[] }>;
  tauCache = raw.map((s, i) => ({
    taskId: `${s.task_id}-${i}`,
    messages: s.traj,
    events: openAiMessagesToEvents(s.traj, { idPrefix: `t${i}-m` }),
  }));
  return tauCache;
}

const WORDS = (
  'flight reservation booking cancel refund baggage passenger insurance economy business upgrade ' +
  'airport delay schedule payment certificate gift card membership gold silver regular seat window ' +
  'aisle departure arrival origin destination itinerary confirm change date return trip price total'
).split(' ');

function syntheticText(seed: number, words: number): string {
  const out: string[] = [];
  let x = seed * 2654435761;
  for (let i = 0; i < words; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out.push(WORDS[x % WORDS.length]);
  }
  return out.join(' ');
}

/** A deterministic synthetic corpus (used when the shared data is absent): 150 sessions of user, assistant, tool-call and tool-result events. */
export function syntheticCorpus(sessions = 150): Conversation[] {
  const out: Conversation[] = [];
  for (let s = 0; s < sessions; s++) {
    const events: SessionEvent[] = [{ id: `s${s}-sys`, type: 'system', text: syntheticText(s, 400) }];
    for (let t = 0; t < 6; t++) {
      const k = `s${s}-t${t}`;
      events.push({ id: `${k}-u`, type: 'user', text: syntheticText(s * 31 + t, 25) });
      events.push({
        id: `${k}-a1`,
        type: 'assistant',
        text: null,
        toolCalls: [{ id: `${k}-c`, name: 'get_reservation_details', arguments: `{"reservation_id":"R${s}${t}"}` }],
      });
      events.push({
        id: `${k}-r`,
        type: 'tool',
        responses: [{ toolCallId: `${k}-c`, name: 'get_reservation_details', data: JSON.stringify({ text: syntheticText(s * 7 + t, 80) }) }],
      });
      events.push({ id: `${k}-a2`, type: 'assistant', text: syntheticText(s * 13 + t, 40) });
    }
    out.push({ taskId: `synthetic-${s}`, messages: [], events });
  }
  return out;
}

/** The τ-bench corpus when available, else the synthetic one; `source` says which. */
export function corpus(): { source: 'tau-bench' | 'synthetic'; conversations: Conversation[] } {
  const tau = loadTauBench();
  return tau ? { source: 'tau-bench', conversations: tau } : { source: 'synthetic', conversations: syntheticCorpus() };
}

/** A corpus event with its costs computed once (costs do not depend on ids). */
export interface TemplateEvent {
  event: SessionEvent;
  costs: EventCosts;
}

/**
 * An endless, deterministic stream of events made from the corpus' non-system events, in
 * conversation order, each with a unique id (`<prefix><n>`) and tool-call ids made unique per
 * cycle, so that appends never collide and every tool result follows its call.
 */
export class EventCycler {
  private readonly templates: TemplateEvent[];
  private index = 0;
  private readonly callIds = new Map<string, string>();
  private counter = 0;

  /** @param withCosts compute each template's costs once (needed when events bypass the append handler). */
  constructor(
    conversations: readonly Conversation[],
    private readonly prefix = 'e',
    withCosts = false,
    includeSystem = false,
  ) {
    // Calls without a response in their conversation are open calls, which no compaction may
    // archive (§3.3): keep them out, or the active window of a long log could never shrink.
    const events = conversations.flatMap((c) => {
      const answered = new Set(c.events.flatMap((e) => (e.type === 'tool' ? e.responses.map((r) => r.toolCallId) : [])));
      return c.events.filter((e) => (includeSystem || e.type !== 'system') && !(e.type === 'assistant' && e.toolCalls?.some((call) => !answered.has(call.id))));
    });
    this.templates = events.map((event) => ({ event, costs: withCosts ? computeEventCosts(event) : { cl100k_base: 0, o200k_base: 0, chars: 0 } }));
  }

  /** Number of distinct template events. */
  get size(): number {
    return this.templates.length;
  }

  /** The next event (with a fresh id) and its template's costs. */
  next(): TemplateEvent {
    const t = this.templates[this.index];
    const n = this.counter++;
    const id = `${this.prefix}${n}`;
    let event: SessionEvent;
    switch (t.event.type) {
      case 'assistant':
        // Real logs reuse a call id once it is answered: give every call a fresh id, and every
        // response the id of the latest call it answers.
        event = t.event.toolCalls
          ? {
              ...t.event,
              id,
              toolCalls: t.event.toolCalls.map((c) => {
                const unique = `${c.id}~${n}`;
                this.callIds.set(c.id, unique);
                return { ...c, id: unique };
              }),
            }
          : { ...t.event, id };
        break;
      case 'tool':
        event = { ...t.event, id, responses: t.event.responses.map((r) => ({ ...r, toolCallId: this.callIds.get(r.toolCallId) ?? `${r.toolCallId}~${n}` })) };
        break;
      default:
        event = { ...t.event, id };
    }
    this.index = (this.index + 1) % this.templates.length;
    return { event, costs: t.costs };
  }

  /** The next `n` events. */
  take(n: number): TemplateEvent[] {
    const out: TemplateEvent[] = [];
    for (let i = 0; i < n; i++) out.push(this.next());
    return out;
  }
}

/** Plain-text user/assistant messages of the corpus (no tool events), for single-event appends that need no tool bookkeeping. */
export function textMessages(conversations: readonly Conversation[]): Array<{ type: 'user' | 'assistant'; text: string }> {
  const out: Array<{ type: 'user' | 'assistant'; text: string }> = [];
  for (const c of conversations) {
    for (const e of c.events) {
      if ((e.type === 'user' || e.type === 'assistant') && !('toolCalls' in e && e.toolCalls?.length) && e.text) out.push({ type: e.type, text: e.text });
    }
  }
  return out;
}
