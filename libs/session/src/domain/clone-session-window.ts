import type { SessionWindowState } from './session-window';

/**
 * A copy of `state` that can be folded further without touching the original (entries are
 * immutable and shared; the maps are new).
 */
export function cloneSessionWindow(state: SessionWindowState): SessionWindowState {
  return {
    ...state,
    active: new Map(state.active),
    revisionsById: new Map(state.revisionsById),
    archivedOpenCalls: new Map(state.archivedOpenCalls),
    lastCompaction: state.lastCompaction ? { ...state.lastCompaction } : null,
  };
}
