/**
 * Turns and the preamble (DESIGN §3.2): a turn starts at a `user` event; real events before the
 * first user event are the preamble.
 */
import type { CostedEvent, SessionEvent } from './session-event';
import { isRealEvent } from './classify';

type HasEvent = { event: SessionEvent } | SessionEvent;

function kind(x: HasEvent): string {
  return 'event' in x ? x.event.type : x.type;
}

/**
 * Positions (in `realEvents`) where a turn starts, i.e. of every `user` event, ascending.
 * `realEvents` should hold real events only (see `classifyEvents`).
 */
export function turnStarts(realEvents: readonly HasEvent[]): number[] {
  const starts: number[] = [];
  realEvents.forEach((e, i) => {
    if (kind(e) === 'user') starts.push(i);
  });
  return starts;
}

/**
 * Number of turns among `events` = the number of `user` events (DESIGN §3.5: the turn in progress
 * included). System messages and summaries are not real events and never count. Accepts costed or
 * plain events.
 */
export function countTurns(events: readonly HasEvent[]): number {
  let n = 0;
  for (const e of events) if (kind(e) === 'user') n++;
  return n;
}

/**
 * Length of the preamble: the number of real events before the first user event (DESIGN §3.2).
 * Equals `realEvents.length` when there is no user event at all.
 */
export function preambleLength(realEvents: readonly HasEvent[]): number {
  const i = realEvents.findIndex((e) => kind(e) === 'user');
  return i < 0 ? realEvents.length : i;
}

/**
 * Splits the real events of `events` (log order) into the preamble and the turns (DESIGN §3.2).
 * Each turn starts with its user event and runs to the next one. Non-real events (system,
 * summary) are skipped.
 */
export function groupTurns(events: readonly CostedEvent[]): { preamble: CostedEvent[]; turns: CostedEvent[][] } {
  const preamble: CostedEvent[] = [];
  const turns: CostedEvent[][] = [];
  for (const c of events) {
    if (!isRealEvent(c.event)) continue;
    if (c.event.type === 'user') turns.push([c]);
    else if (turns.length === 0) preamble.push(c);
    else turns[turns.length - 1].push(c);
  }
  return { preamble, turns };
}
