/**
 * Tool-call consistency of an append (what a provider would reject): a tool response must answer
 * a call that is in the session (active window) or earlier in the request, and that call must not
 * be answered already; an assistant event must not repeat a call id,
 * nor reuse the id of a call that is still open. Reusing the id of an ANSWERED call is allowed:
 * agents do it (real tau-bench sessions reuse ids once answered). A response answers the most
 * recent call with its id.
 */
import type { SessionEvent } from '@lib/compaction';
import { ToolCallConflictError, UnknownToolCallError } from '../errors';

interface CallState {
  answered: boolean;
}

/** Call id → state of the most recent call with that id. */
export class ToolCallLedger {
  private readonly calls = new Map<string, CallState>();

  /** Records events already in the session (no checks: they were accepted before). Log order. */
  static of(events: Iterable<SessionEvent>): ToolCallLedger {
    const ledger = new ToolCallLedger();
    for (const e of events) {
      if (e.type === 'assistant') for (const c of e.toolCalls ?? []) ledger.calls.set(c.id, { answered: false });
      if (e.type === 'tool') for (const r of e.responses) {
        const call = ledger.calls.get(r.toolCallId);
        if (call) call.answered = true;
      }
    }
    return ledger;
  }

  /**
   * Checks one new event against the ledger and records it. `field` is its JSON path in the
   * request for error messages (`events[2]`), or a function naming a native field path under it
   * in the request's own terms (`.toolCalls[0].id` → `messages[2].tool_calls[0].id`).
   * @throws UnknownToolCallError (422) for a response to a call that is not in the session.
   * @throws ToolCallConflictError (422) for a repeated or still-open call id, or a second answer.
   * A response's `name` is not checked against the call's: providers do not require it to match.
   */
  accept(event: SessionEvent, field: string | ((nativePath: string) => string)): void {
    const path = typeof field === 'string' ? (p: string) => `${field}${p}` : field;
    if (event.type === 'assistant') {
      const inEvent = new Set<string>();
      (event.toolCalls ?? []).forEach((c, i) => {
        const at = path(`.toolCalls[${i}].id`);
        if (inEvent.has(c.id)) throw new ToolCallConflictError(at, `${at}: call id ${JSON.stringify(c.id)} appears twice in this event; give each call its own id`);
        if (this.calls.get(c.id)?.answered === false) {
          throw new ToolCallConflictError(at, `${at}: call id ${JSON.stringify(c.id)} is still waiting for its tool response; answer it before reusing the id`);
        }
        inEvent.add(c.id);
      });
      for (const c of event.toolCalls ?? []) this.calls.set(c.id, { answered: false });
    }
    if (event.type === 'tool') {
      const inEvent = new Set<string>();
      event.responses.forEach((r, i) => {
        const at = path(`.responses[${i}].toolCallId`);
        const call = this.calls.get(r.toolCallId);
        if (!call) throw new UnknownToolCallError(at, r.toolCallId);
        if (call.answered || inEvent.has(r.toolCallId)) {
          throw new ToolCallConflictError(at, `${at}: call ${JSON.stringify(r.toolCallId)} is already answered; a call takes one response`);
        }
        inEvent.add(r.toolCallId);
      });
      for (const r of event.responses) this.calls.get(r.toolCallId)!.answered = true;
    }
  }
}
