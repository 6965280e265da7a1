/**
 * The guarantees every strategy shares (DESIGN §3.3): snapping the cut to a user event, keeping
 * the newest turn, and tool safety (responses with their calls, calls with their responses, open
 * calls until they are abandoned).
 *
 * Positions here index the array of REAL events of a pass (see `classifyEvents`): the real
 * events archived by a pass are the half-open range `[lowest, cut)` minus the `retained`
 * positions (responses that answer a kept call stay kept in place); `cut === lowest` means no
 * cut. `lowest` is 0, except for turn-window where it is the preamble length (the preamble is
 * always kept).
 */
import type { CostedEvent } from './session-event';
import { pairToolCalls, type PairedCall } from './tool-call-pairing';

/** The cut once DESIGN §3.3 is applied. */
export interface SettledCut {
  /** Position in `real`; `[lowest, cut)` minus {@link retained} is archived; `cut === lowest` archives nothing. */
  cut: number;
  /** Positions in `[lowest, cut)` kept in place: responses answering a kept call (rule 3), ascending. */
  retained: number[];
  /**
   * The call that made tool safety move the cut back (the last one that did), when it did: its id
   * and the position in `real` of the assistant event holding it.
   */
  blockedBy?: { toolCallId: string; position: number };
}

/** Greatest user position ≤ `pos`, or -1 when `pos` lies in the preamble. */
function turnStartOf(real: readonly CostedEvent[], pos: number): number {
  for (let i = pos; i >= 0; i--) if (real[i].event.type === 'user') return i;
  return -1;
}

/**
 * For archived range `[lowest, cut)`: the responses kept in place (they answer a kept call), and
 * the earliest archived call that breaks tool safety, if any: one whose response is kept (it would
 * lose its call), or an open call no user event follows (not abandoned, DESIGN §3.2).
 */
function checkTools(calls: readonly PairedCall[], lowest: number, cut: number, lastUser: number): { retained: number[]; unsafe?: PairedCall } {
  const inRange = (p: number) => p >= lowest && p < cut;
  const retained = new Set<number>();
  for (const call of calls) if (!inRange(call.callAt)) for (const r of call.responses) if (inRange(r)) retained.add(r);
  let unsafe: PairedCall | undefined;
  for (const call of calls) {
    if (!inRange(call.callAt) || (unsafe && unsafe.callAt <= call.callAt)) continue;
    const broken =
      call.responses.length === 0
        ? lastUser < call.callAt // open and not abandoned
        : call.responses.some((r) => !inRange(r) || retained.has(r)); // a kept response would lose its call
    if (broken) unsafe = call;
  }
  return { retained: [...retained].sort((a, b) => a - b), ...(unsafe ? { unsafe } : {}) };
}

/**
 * Applies DESIGN §3.3 to a strategy's raw cut (see {@link SettledCut}; `lowest ≤ cut ≤ real.length`):
 *
 * 1. a cut inside a turn (at a non-user event) moves forward to the next user event;
 * 2. if it reaches the end, it moves back to the last user event (the newest turn is always
 *    kept); with no user event at all (or none after `lowest`), nothing is archived;
 * 3. a response answering a kept call stays kept in place (`retained`), even inside an archived
 *    turn; while an archived call has a kept response, or is open and not abandoned (no user
 *    event after it), the cut moves back to the start of the turn holding that call (to `lowest`
 *    if the call is in the preamble), repeatedly until all hold. An abandoned call is archived
 *    with its turn.
 *
 * Pairing is {@link pairToolCalls}'s (a response answers the most recent earlier call with its
 * id). `rawCut` null means the strategy asks for no cut. Rule 1 applies even to
 * `rawCut === lowest` (token-count has no "everything fits" shortcut, so a leading preamble is
 * archived). Pure.
 */
export function settleCut(real: readonly CostedEvent[], rawCut: number | null, lowest: number): SettledCut {
  if (rawCut === null) return { cut: lowest, retained: [] };
  const n = real.length;
  let cut = Math.max(rawCut, lowest);
  while (cut < n && real[cut].event.type !== 'user') cut++;
  if (cut >= n) {
    cut = turnStartOf(real, n - 1);
    if (cut < 0) return { cut: lowest, retained: [] };
  }
  if (cut <= lowest) return { cut: lowest, retained: [] };
  const { calls } = pairToolCalls(real.map((c) => c.event));
  const lastUser = turnStartOf(real, n - 1);
  let blockedBy: SettledCut['blockedBy'];
  for (;;) {
    const { retained, unsafe } = checkTools(calls, lowest, cut, lastUser);
    if (!unsafe) return { cut, retained, ...(blockedBy ? { blockedBy } : {}) };
    blockedBy = { toolCallId: unsafe.id, position: unsafe.callAt };
    const start = turnStartOf(real, unsafe.callAt);
    if (start <= lowest) return { cut: lowest, retained: [], blockedBy };
    cut = start;
  }
}
