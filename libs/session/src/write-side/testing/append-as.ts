import type { SessionEvent } from '@lib/compaction';
import { AppendSessionEventsCommand, type AppendSessionEventsHandler, type AppendSessionEventsResult } from '../append-session-events';

/**
 * Appends `events` to session `sessionId` of tenant `t` through `handler`, at any revision
 * (`expectedRevision` `'any'`), as `userId` when given, each event without a client expected
 * revision of its own. For specs that drive the real handler.
 * @returns the handler's answer (revision and position of the last event written)
 * @throws whatever the handler rejects with (its domain errors: unknown tool call, user id
 *   conflict, …), unchanged
 */
export function appendAs(
  handler: AppendSessionEventsHandler,
  sessionId: string,
  events: readonly SessionEvent[],
  userId?: string,
): Promise<AppendSessionEventsResult> {
  return handler.execute(
    new AppendSessionEventsCommand(
      't',
      sessionId,
      events.map((event) => ({ event })),
      'any',
      userId,
    ),
  );
}
