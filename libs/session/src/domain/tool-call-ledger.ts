/**
 * Tool-call consistency of an append (what a provider would reject): a tool response must answer
 * a call that is in the session (active window), earlier in the request, or archived while open
 * (abandoned, DESIGN §3.3 rule 3); that call must not be answered already; an assistant event
 * must not repeat a call id, nor reuse the id of a call that is still open in the window. Reusing
 * the id of an ANSWERED call is allowed: agents do it (real tau-bench sessions reuse ids once
 * answered). Pairing is `ToolCallPairing`'s: a response answers the most recent earlier call with
 * its id.
 *
 * The codes, by where the call is and whether it is answered (docs/http-api.md "Tool calls"):
 *
 * | the call is | unanswered | answered |
 * | --- | --- | --- |
 * | in the window (abandoned or not), or earlier in the request | accepted | `tool_call_conflict` |
 * | archived (while open, i.e. abandoned; or with its answer) | accepted, archived on arrival | `tool_call_conflict` |
 * | not in the session | `unknown_tool_call` | — |
 *
 * An archived answered call is in neither the window nor the archived open calls: the ledger
 * knows it from `callIdsInLog` (looked up in the log by the caller, see `decideAppend`).
 */
import { quoteInput, ToolCallPairing, type SessionEvent } from '@lib/compaction';
import { ToolCallConflictError, UnknownToolCallError, type EventLocation } from '../errors';
import { endArchivedCallClaims } from './archived-call-claims';

/** What {@link ToolCallLedger.accept} says about an accepted event. */
export interface AcceptedToolEvent {
  /**
   * Present when the event answers calls archived while open: the compaction that archived them
   * (of the first response). The event must be archived on arrival, attributed to it.
   */
  archivedBy?: string;
}

/** Call id → state of the most recent call with that id. */
export class ToolCallLedger {
  private readonly pairing = new ToolCallPairing();
  private position = 0;

  private constructor(
    private readonly archivedOpenCalls: Map<string, { compactionId: string }>,
    private readonly archivedAnsweredCalls: Set<string>,
  ) {}

  /**
   * Records events already in the session (no checks: they were accepted before), log order, and
   * the open calls archived with their turn (call id → compaction that archived it; each the most
   * recent call with its id). `callIdsInLog`: ids of calls made anywhere in the session's log
   * (window or archived). A response whose call is in neither the window, the request nor the
   * archived open calls, but whose id is here, answers a call that was archived after it was
   * answered: a second answer (`tool_call_conflict`), not an unknown call.
   */
  static of(
    events: Iterable<SessionEvent>,
    archivedOpenCalls: ReadonlyMap<string, { compactionId: string }> = new Map(),
    callIdsInLog: Iterable<string> = [],
  ): ToolCallLedger {
    const ledger = new ToolCallLedger(new Map(archivedOpenCalls), new Set(callIdsInLog));
    for (const e of events) ledger.pairing.add(e, ledger.position++);
    return ledger;
  }

  /**
   * Checks one new event against the ledger and records it. `index` is the event's place in the
   * command: errors carry it with the native field at fault (`toolCalls[1].id`,
   * `responses[0].toolCallId`) as their {@link EventLocation}.
   * @returns for a tool event answering archived calls, the compaction to attribute it to.
   * @throws UnknownToolCallError (422) for a response to a call that is not in the session.
   * @throws ToolCallConflictError (422) for a repeated or still-open call id, a second answer (to
   *   a call in the window, in the request, or archived: answered before it was archived, or by a
   *   late answer), or one event answering both archived and active calls.
   * A response's `name` is not checked against the call's: providers do not require it to match.
   */
  accept(event: SessionEvent, index: number): AcceptedToolEvent {
    if (event.type === 'assistant') {
      const inEvent = new Set<string>();
      (event.toolCalls ?? []).forEach((c, i) => {
        const at: EventLocation = { index, field: `toolCalls[${i}].id` };
        if (inEvent.has(c.id)) throw new ToolCallConflictError(at, c.id, `call id ${quoteInput(c.id)} appears twice in this event; give each call its own id`);
        if (!this.archivedOpenCalls.has(c.id) && this.pairing.latestCall(c.id)?.responses.length === 0) {
          throw new ToolCallConflictError(at, c.id, `call id ${quoteInput(c.id)} is still waiting for its tool response; answer it before reusing the id`);
        }
        inEvent.add(c.id);
      });
      endArchivedCallClaims(this.archivedOpenCalls, event);
      // A newer call with the id takes it over from an archived answered one.
      for (const c of event.toolCalls ?? []) this.archivedAnsweredCalls.delete(c.id);
      this.pairing.add(event, this.position++);
      return {};
    }
    if (event.type !== 'tool') {
      this.pairing.add(event, this.position++);
      return {};
    }
    const inEvent = new Set<string>();
    const archivedBy: string[] = [];
    event.responses.forEach((r, i) => {
      const at: EventLocation = { index, field: `responses[${i}].toolCallId` };
      const archived = this.archivedOpenCalls.get(r.toolCallId);
      const call = archived ? undefined : this.pairing.latestCall(r.toolCallId);
      const answeredArchived = !archived && !call && this.archivedAnsweredCalls.has(r.toolCallId);
      if (!archived && !call && !answeredArchived) throw new UnknownToolCallError(at, r.toolCallId);
      if (answeredArchived) {
        throw new ToolCallConflictError(
          at,
          r.toolCallId,
          `call ${quoteInput(r.toolCallId)} is already answered (the call and its answer were archived by a compaction); a call takes one response`,
        );
      }
      if ((call && call.responses.length > 0) || inEvent.has(r.toolCallId)) {
        throw new ToolCallConflictError(at, r.toolCallId, `call ${quoteInput(r.toolCallId)} is already answered; a call takes one response`);
      }
      if (archived) archivedBy.push(archived.compactionId);
      if (archived ? archivedBy.length !== i + 1 : archivedBy.length > 0) {
        throw new ToolCallConflictError(
          at,
          r.toolCallId,
          'this event answers both calls archived with their turn and calls still in the window; send the answers to archived calls in a tool event of their own',
        );
      }
      inEvent.add(r.toolCallId);
    });
    if (archivedBy.length === 0) {
      this.pairing.add(event, this.position++);
      return {};
    }
    // A late answer pairs with its archived call, not with any call of the window; that call is answered now.
    endArchivedCallClaims(this.archivedOpenCalls, event);
    for (const r of event.responses) this.archivedAnsweredCalls.add(r.toolCallId);
    this.position++;
    return { archivedBy: archivedBy[0] };
  }
}
