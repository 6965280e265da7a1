/**
 * Classes of events in a pass (DESIGN §3.2).
 */
import { isNotice, type CostedEvent } from './session-event';

/**
 * The active events of a session sorted into the classes of DESIGN §3.2. Every array holds
 * positions in the input array, ascending (log order).
 */
export interface EventClasses {
  /** Position of the latest stored system message that is not a notice (always kept, in its place); -1 when none. */
  pinnedSystem: number;
  /** Positions of every other stored system message that is not a notice (archived by every pass). */
  supersededSystems: number[];
  /** Positions of synthetic summary events. */
  summaries: number[];
  /** Positions of real events (user, assistant, tool, notices). Every limit counts these only. */
  real: number[];
}

/**
 * Classifies active events (log order) per DESIGN §3.2: pinned system message (the latest
 * `system` that is not a notice), superseded system messages (the other non-notice ones),
 * summaries, and real events (notices included). Pure; O(n).
 */
export function classifyEvents(events: readonly CostedEvent[]): EventClasses {
  const systems: number[] = [];
  const summaries: number[] = [];
  const real: number[] = [];
  events.forEach((c, i) => {
    if (isRealEvent(c.event)) real.push(i);
    else if (c.event.type === 'summary') summaries.push(i);
    else systems.push(i);
  });
  const pinnedSystem = systems.length > 0 ? systems[systems.length - 1] : -1;
  return { pinnedSystem, supersededSystems: systems.slice(0, -1), summaries, real };
}

/** True for the real events of DESIGN §3.2: `user`, `assistant`, `tool`, and system notices. */
export function isRealEvent(event: { type: string; notice?: unknown }): boolean {
  return event.type === 'user' || event.type === 'assistant' || event.type === 'tool' || isNotice(event);
}
