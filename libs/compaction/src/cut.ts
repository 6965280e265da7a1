/**
 * The guarantees every strategy shares (DESIGN §3.3): snapping the cut to a user event, keeping
 * the newest turn, and tool safety (open calls, responses with their calls).
 *
 * Positions here index the array of REAL events of a pass (see `classifyEvents`): the real
 * events archived by a pass are the half-open range `[lowest, cut)`; `cut === lowest` means no
 * cut. `lowest` is 0, except for turn-window where it is the preamble length (the preamble is
 * always kept).
 */
import type { CostedEvent } from './session-event';

interface ToolIndex {
  /**
   * Per call position: for each call id the assistant event at that position makes, the
   * positions of the tool events answering THAT call. A response answers the most recent earlier
   * call with its id: agents (and providers) reuse a call id once it has been answered, so ids
   * are not unique over a session.
   */
  callsAt: Map<number, Array<{ id: string; responses: number[] }>>;
}

function indexTools(real: readonly CostedEvent[]): ToolIndex {
  const callsAt = new Map<number, Array<{ id: string; responses: number[] }>>();
  const latestCall = new Map<string, { id: string; responses: number[] }>();
  real.forEach((c, i) => {
    const e = c.event;
    if (e.type === 'assistant' && e.toolCalls && e.toolCalls.length > 0) {
      const calls = e.toolCalls.map((t) => ({ id: t.id, responses: [] as number[] }));
      callsAt.set(i, calls);
      for (const call of calls) latestCall.set(call.id, call);
    } else if (e.type === 'tool') {
      for (const r of e.responses ?? []) latestCall.get(r.toolCallId)?.responses.push(i);
    }
  });
  return { callsAt };
}

/**
 * Position of the earliest call archived by `[lowest, cut)` that breaks tool safety (DESIGN §3.3
 * rule 3), or -1: a call is protected when it has no response after it among the events (an open
 * call), or when one of its responses is kept (outside the archived range).
 */
function earliestUnsafeCall(tools: ToolIndex, lowest: number, cut: number): number {
  let earliest = -1;
  for (const [pos, calls] of tools.callsAt) {
    if (pos < lowest || pos >= cut) continue;
    if (earliest >= 0 && pos >= earliest) continue;
    const unsafe = calls.some(({ responses }) => {
      if (responses.length === 0) return true; // open call
      return responses.some((r) => r < lowest || r >= cut); // a kept response would lose its call
    });
    if (unsafe) earliest = pos;
  }
  return earliest;
}

/** Greatest user position ≤ `pos`, or -1 when `pos` lies in the preamble. */
function turnStartOf(real: readonly CostedEvent[], pos: number): number {
  for (let i = pos; i >= 0; i--) if (real[i].event.type === 'user') return i;
  return -1;
}

/**
 * Applies DESIGN §3.3 to a strategy's raw cut and returns the settled cut (a position in `real`,
 * with `lowest ≤ result ≤ real.length`; `result === lowest` means nothing is archived):
 *
 * 1. a cut inside a turn (at a non-user event) moves forward to the next user event;
 * 2. if it reaches the end, it moves back to the last user event (the newest turn is always
 *    kept); with no user event at all (or none after `lowest`), nothing is archived;
 * 3. while an archived call is open (no response anywhere in `real`) or has a kept response, the
 *    cut moves back to the start of the turn holding that call (to `lowest` if the call is in the
 *    preamble), repeatedly until both hold.
 *
 * `rawCut` null means the strategy asks for no cut. Rule 1 applies even to `rawCut === lowest`
 * (token-count has no "everything fits" shortcut, so a leading preamble is archived). Pure.
 */
export function settleCut(real: readonly CostedEvent[], rawCut: number | null, lowest: number): number {
  if (rawCut === null) return lowest;
  const n = real.length;
  let cut = Math.max(rawCut, lowest);
  while (cut < n && real[cut].event.type !== 'user') cut++;
  if (cut >= n) {
    cut = turnStartOf(real, n - 1);
    if (cut < 0) return lowest;
  }
  if (cut <= lowest) return lowest;
  const tools = indexTools(real);
  for (;;) {
    const unsafe = earliestUnsafeCall(tools, lowest, cut);
    if (unsafe < 0) return cut;
    const start = turnStartOf(real, unsafe);
    if (start <= lowest) return lowest;
    cut = start;
  }
}
