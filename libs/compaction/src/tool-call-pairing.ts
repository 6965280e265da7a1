/**
 * Tool-call pairing (DESIGN §3.2): which call each tool response answers. The one rule, used by
 * every layer (the cut, the append checks, the OpenAI rendering, the session fold):
 *
 * a response answers the most recent earlier call with its id.
 *
 * Agents (and providers) reuse a call id once it has been answered, so ids are not unique over a
 * session; pairing by "most recent earlier call" makes a reused id unambiguous.
 */
import type { SessionEvent } from './session-event';

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
