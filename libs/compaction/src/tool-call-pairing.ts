/**
 * Tool-call pairing (DESIGN §3.2): which call each tool response answers. The one rule, used by
 * every layer (the cut, the append checks, the OpenAI rendering, the summarizer's input, the session fold):
 *
 * a response answers the most recent earlier call with its id.
 *
 * Agents (and providers) reuse a call id once it has been answered, so ids are not unique over a
 * session; pairing by "most recent earlier call" makes a reused id unambiguous.
 */
import { isNotice, type SessionEvent, type ToolCall, type ToolEvent } from './session-event';

/** One call as paired: where it was made and the responses that answer it. */
export interface PairedCall {
  /** The call id. */
  id: string;
  /** Position of the assistant event that makes the call (in the sequence given to the pairing). */
  callAt: number;
  /** Positions of the tool events answering this call, ascending (usually one). */
  responses: number[];
}

/** What {@link ToolCallPairing.add} found in one event. */
export interface PairedEvent {
  /** The calls this event makes (assistant events), in the event's order. */
  calls: PairedCall[];
  /** For each response of this event (tool events), the call it answers, or undefined when no earlier call has its id. */
  answers: Array<PairedCall | undefined>;
}

/**
 * Incremental pairing: feed events in log order with {@link add}. O(1) per call or response.
 * Positions are whatever the caller numbers its events with (array indices, revisions as numbers).
 */
export class ToolCallPairing {
  private readonly latest = new Map<string, PairedCall>();

  /** Every call seen so far, in log order. */
  readonly calls: PairedCall[] = [];

  /** Records one event at position `at` and says which calls it makes and which calls its responses answer. */
  add(event: SessionEvent, at: number): PairedEvent {
    if (event.type === 'assistant') {
      const calls = (event.toolCalls ?? []).map((t) => ({ id: t.id, callAt: at, responses: [] as number[] }));
      for (const call of calls) {
        this.latest.set(call.id, call);
        this.calls.push(call);
      }
      return { calls, answers: [] };
    }
    if (event.type === 'tool') {
      const answers = (event.responses ?? []).map((r) => this.latest.get(r.toolCallId));
      answers.forEach((call) => {
        if (call && call.responses[call.responses.length - 1] !== at) call.responses.push(at);
      });
      return { calls: [], answers };
    }
    return { calls: [], answers: [] };
  }

  /** The most recent call with `id` seen so far, if any (the one a response with that id would answer). */
  latestCall(id: string): PairedCall | undefined {
    return this.latest.get(id);
  }
}

/**
 * Pairs every response of `events` (log order) with the call it answers. Positions are indices
 * in `events`. `answersOf[i]` lists, for event i, the call each of its responses answers (empty
 * for events that are not tool events).
 */
export function pairToolCalls(events: readonly SessionEvent[]): { calls: PairedCall[]; answersOf: Array<Array<PairedCall | undefined>> } {
  const pairing = new ToolCallPairing();
  const answersOf = events.map((e, i) => pairing.add(e, i).answers);
  return { calls: pairing.calls, answersOf };
}

/**
 * The answer a rendering to a model gives a call that has none (DESIGN §3.2): providers reject a
 * call without its answer once the conversation went on, so every rendering shows this instead.
 */
export const NO_TOOL_RESPONSE = '[no tool response recorded]';

/**
 * DESIGN §3.2, the placeholder answer — the one rule every rendering to a model follows (the
 * OpenAI window, its cost, the summarizer's input): which calls of `events` (log order, a window or
 * part of one) are answered with {@link NO_TOOL_RESPONSE}. Every call with no response in
 * `events` (pairing per {@link pairToolCalls}), except, when nothing follows `events`
 * (`conversationGoesOn` false), the calls of the newest message — the last event that is not a
 * tool event nor a stored system message other than a notice — which may still be running.
 *
 * Returns, by index in `events` of the assistant event making them, its calls so answered, in
 * the event's order (events with none are absent). Pure, O(events + calls).
 */
export function placeholderAnsweredCalls(events: readonly SessionEvent[], conversationGoesOn = false): Map<number, ToolCall[]> {
  const pairing = new ToolCallPairing();
  const made = events.map((event, i) => pairing.add(event, i).calls);
  let newest = -1;
  if (!conversationGoesOn)
    events.forEach((event, i) => {
      if (event.type !== 'tool' && (event.type !== 'system' || isNotice(event))) newest = i;
    });
  const answered = new Map<number, ToolCall[]>();
  events.forEach((event, i) => {
    if (event.type !== 'assistant' || i === newest) return;
    const open = (event.toolCalls ?? []).filter((_, j) => made[i][j].responses.length === 0);
    if (open.length > 0) answered.set(i, open);
  });
  return answered;
}

/** The tool event a {@link NO_TOOL_RESPONSE} answer to `call` stands for (what it is formatted and costed as, DESIGN §3.1). */
export function placeholderAnswerEvent(call: ToolCall): ToolEvent {
  return { id: call.id, type: 'tool', responses: [{ toolCallId: call.id, name: call.name, data: NO_TOOL_RESPONSE }] };
}
