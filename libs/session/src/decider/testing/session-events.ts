/**
 * Builders of native session events for decider specs: short to read, one line per event.
 */
import type { SessionEvent } from '@lib/compaction';

/** A user event `id` (text defaults to `text of <id>`). */
export const user = (id: string, text = `text of ${id}`): SessionEvent => ({ id, type: 'user', text });

/** An assistant text reply `id`. */
export const reply = (id: string, text = `reply ${id}`): SessionEvent => ({ id, type: 'assistant', text });

/** A stored system message `id` (the agent's instructions, or a notice when `notice`). */
export const system = (id: string, text = `system ${id}`, notice = false): SessionEvent => ({ id, type: 'system', text, ...(notice ? { notice: true } : {}) });

/** An assistant event `id` making one call per id in `callIds` (tool `f`, arguments `{}`). */
export const calls = (id: string, ...callIds: string[]): SessionEvent => ({
  id,
  type: 'assistant',
  text: null,
  toolCalls: callIds.map((c) => ({ id: c, name: 'f', arguments: '{}' })),
});

/** A tool event `id` answering each call id in `callIds` (tool `f`, data `ok`). */
export const answers = (id: string, ...callIds: string[]): SessionEvent => ({
  id,
  type: 'tool',
  responses: callIds.map((c) => ({ toolCallId: c, name: 'f', data: 'ok' })),
});
