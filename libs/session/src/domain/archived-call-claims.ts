/**
 * When an abandoned call archived while open stops waiting for its late answer (DESIGN §3.3 rule
 * 3). One rule for the session fold and the append checks.
 */
import type { SessionEvent } from '@lib/compaction';

/**
 * Ends the claims that `event` ends on `archivedOpenCalls` (keyed by call id), in place: a newer
 * call with an id takes the id over, and an answer to an archived call is its late answer (it
 * arrives once). Other events change nothing.
 */
export function endArchivedCallClaims(archivedOpenCalls: Map<string, unknown>, event: SessionEvent): void {
  if (event.type === 'assistant') for (const c of event.toolCalls ?? []) archivedOpenCalls.delete(c.id);
  if (event.type === 'tool') for (const r of event.responses) archivedOpenCalls.delete(r.toolCallId);
}
