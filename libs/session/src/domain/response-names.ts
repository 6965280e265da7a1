/**
 * Tool names of responses sent without one (OpenAI tool messages carry only `tool_call_id`): the
 * name of the call each answers, found in the session state an append is decided on. Pure.
 */
import type { SessionEvent, ToolResponse } from '@lib/compaction';
import type { SessionWindowState } from './session-window';

/**
 * `events` (one append's, in order) with every tool response whose `name` is `''` named after
 * the call it answers, as the tool-call rules (`ToolCallLedger`) pair them against `state`: a call
 * earlier in `events`, else an open call archived with its turn (`state.archivedOpenCalls`), else
 * the most recent call with the id in the active window. A response whose call is in none of them
 * keeps `''` (the ledger then refuses it: unknown call, or a second answer to an archived one).
 * Events that change are copies; the others (and the input) are returned as they are, so
 * `result[i] === events[i]` says event i was not renamed. O(active window) when some response
 * has no name, O(events) otherwise.
 */
export function nameResponsesFromCalls(events: readonly SessionEvent[], state: SessionWindowState | null): SessionEvent[] {
  if (!events.some((e) => e.type === 'tool' && e.responses.some((r) => r.name === ''))) return [...events];
  const inWindow = new Map<string, string>();
  if (state) {
    for (const entry of state.active.values()) {
      if (entry.event.type === 'assistant') for (const c of entry.event.toolCalls ?? []) inWindow.set(c.id, c.name);
    }
  }
  const archived = new Map<string, string>();
  for (const [id, call] of state?.archivedOpenCalls ?? []) archived.set(id, call.name);
  return events.map((event) => {
    if (event.type === 'assistant') {
      // A newer call takes the id over, from the window and from an archived open call.
      for (const c of event.toolCalls ?? []) {
        inWindow.set(c.id, c.name);
        archived.delete(c.id);
      }
      return event;
    }
    if (event.type !== 'tool') return event;
    const names = event.responses.map((r) => (r.name === '' ? (archived.get(r.toolCallId) ?? inWindow.get(r.toolCallId) ?? '') : r.name));
    // A late answer ends its archived call's claim (it arrives once).
    for (const r of event.responses) archived.delete(r.toolCallId);
    if (names.every((name, i) => name === event.responses[i].name)) return event;
    return { ...event, responses: event.responses.map((r, i): ToolResponse => (names[i] === r.name ? r : { ...r, name: names[i] })) };
  });
}
