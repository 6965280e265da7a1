/**
 * Classes of events in a pass (DESIGN §3.2).
 */
import type { CostedEvent } from './session-event';

/**
 * The active events of a session sorted into the classes of DESIGN §3.2. Every array holds
 * positions in the input array, ascending (log order).
 */
export interface EventClasses {
  /** Position of the latest stored system message (always kept, in its place); -1 when none. */
  pinnedSystem: number;
  /** Positions of every other stored system message (archived by every pass). */
  supersededSystems: number[];
  /** Positions of synthetic summary events. */
  summaries: number[];
  /** Positions of real events (user, assistant, tool). Every limit counts these only. */
  real: number[];
}

/**
 * Classifies active events (log order) per DESIGN §3.2: pinned system message (the latest
 * `system`), superseded system messages (the other ones), summaries, and real events. Pure;
 * O(n).
 */
export function classifyEvents(events: readonly CostedEvent[]): EventClasses {
  const systems: number[] = [];
  const summaries: number[] = [];
  const real: number[] = [];
  events.forEach((c, i) => {
    switch (c.event.type) {
      case 'system':
        systems.push(i);
        break;
      case 'summary':
        summaries.push(i);
        break;
      default:
        real.push(i);
    }
  });
  const pinnedSystem = systems.length > 0 ? systems[systems.length - 1] : -1;
  return { pinnedSystem, supersededSystems: systems.slice(0, -1), summaries, real };
}

/** True for the real event kinds (`user`, `assistant`, `tool`), DESIGN §3.2. */
export function isRealEvent(event: { type: string }): boolean {
  return event.type === 'user' || event.type === 'assistant' || event.type === 'tool';
}
