/**
 * Tool-call consistency of an append (what a provider would reject): a tool response must answer
 * a call that is in the session (active window), earlier in the request, or archived while open
 * (abandoned, DESIGN §3.3 rule 3); that call must not be answered already; an assistant event
 * must not repeat a call id, nor reuse the id of a call that is still open in the window. Reusing
 * the id of an ANSWERED call is allowed: agents do it (real tau-bench sessions reuse ids once
 * answered). Pairing is `ToolCallPairing`'s: a response answers the most recent earlier call with
 * its id.
 */
import { ToolCallPairing, type SessionEvent } from '@lib/compaction';
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

  private constructor(private readonly archivedOpenCalls: Map<string, { compactionId: string }>) {}

  /**
   * Records events already in the session (no checks: they were accepted before), log order, and
   * the open calls archived with their turn (call id → compaction that archived it; each the most
   * recent call with its id).
   */
  static of(events: Iterable<SessionEvent>, archivedOpenCalls: ReadonlyMap<string, { compactionId: string }> = new Map()): ToolCallLedger {
    const ledger = new ToolCallLedger(new Map(archivedOpenCalls));
    for (const e of events) ledger.pairing.add(e, ledger.position++);
    return ledger;
  }

  /**
   * Checks one new event against the ledger and records it. `index` is the event's place in the
   * command: errors carry it with the native field at fault (`toolCalls[1].id`,
   * `responses[0].toolCallId`) as their {@link EventLocation}.
   * @returns for a tool event answering archived calls, the compaction to attribute it to.
   * @throws UnknownToolCallError (422) for a response to a call that is not in the session.
   * @throws ToolCallConflictError (422) for a repeated or still-open call id, a second answer, or
   *   one event answering both archived and active calls.
   * A response's `name` is not checked against the call's: providers do not require it to match.
   */
  accept(event: SessionEvent, index: number): AcceptedToolEvent {
    if (event.type === 'assistant') {
      const inEvent = new Set<string>();
      (event.toolCalls ?? []).forEach((c, i) => {
        const at: EventLocation = { index, field: `toolCalls[${i}].id` };
        if (inEvent.has(c.id)) throw new ToolCallConflictError(at, `call id ${JSON.stringify(c.id)} appears twice in this event; give each call its own id`);
        if (!this.archivedOpenCalls.has(c.id) && this.pairing.latestCall(c.id)?.responses.length === 0) {
          throw new ToolCallConflictError(at, `call id ${JSON.stringify(c.id)} is still waiting for its tool response; answer it before reusing the id`);
        }
        inEvent.add(c.id);
      });
      endArchivedCallClaims(this.archivedOpenCalls, event);
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
      if (!archived && !call) throw new UnknownToolCallError(at, r.toolCallId);
      if ((call && call.responses.length > 0) || inEvent.has(r.toolCallId)) {
        throw new ToolCallConflictError(at, `call ${JSON.stringify(r.toolCallId)} is already answered; a call takes one response`);
      }
      if (archived) archivedBy.push(archived.compactionId);
      if (archived ? archivedBy.length !== i + 1 : archivedBy.length > 0) {
        throw new ToolCallConflictError(
          at,
          'this event answers both calls archived with their turn and calls still in the window; send the answers to archived calls in a tool event of their own',
        );
      }
      inEvent.add(r.toolCallId);
    });
    if (archivedBy.length === 0) {
      this.pairing.add(event, this.position++);
      return {};
    }
    // A late answer pairs with its archived call, not with any call of the window.
    endArchivedCallClaims(this.archivedOpenCalls, event);
    this.position++;
    return { archivedBy: archivedBy[0] };
  }
}
