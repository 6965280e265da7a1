/**
 * Counts the conversation events this replica appended in {@link ServiceMetrics}
 * `events_appended_total`, by kind: what a migrator watches an import's progress by (README,
 * Importing existing conversations). A retry writes nothing and counts nothing; HTTP and NATS
 * appends alike.
 */
import { Injectable } from '@nestjs/common';
import { EventsHandler, type IEventHandler } from '@nestjs/cqrs';
import { SessionEventsAppended } from '@lib/session';
import { ServiceMetrics } from './metrics';

/** Feeds `events_appended_total` from {@link SessionEventsAppended} (its `written` kinds). */
@Injectable()
@EventsHandler(SessionEventsAppended)
export class AppendedEventsMetricsHandler implements IEventHandler<SessionEventsAppended> {
  constructor(private readonly metrics: ServiceMetrics) {}

  handle(event: SessionEventsAppended): void {
    const byType = new Map<string, number>();
    for (const type of event.written) byType.set(type, (byType.get(type) ?? 0) + 1);
    for (const [type, n] of byType) this.metrics.eventsAppended.inc({ type }, n);
  }
}
