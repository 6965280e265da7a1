/**
 * Counts the conversation events this replica appended in {@link ServiceMetrics}
 * `events_appended_total`, by kind: what a migrator watches an import's progress by (README,
 * Importing existing conversations). A retry writes nothing and counts nothing; HTTP and NATS
 * appends alike (both go through the append handler, which tells this observer).
 */
import type { AppendedEventsObserver } from '@lib/session';
import type { ServiceMetrics } from './metrics';

/** The {@link AppendedEventsObserver} that feeds `events_appended_total{type}` of `metrics`. */
export function appendedEventsMetrics(metrics: ServiceMetrics): AppendedEventsObserver {
  return {
    appended(types) {
      const byType = new Map<string, number>();
      for (const type of types) byType.set(type, (byType.get(type) ?? 0) + 1);
      for (const [type, n] of byType) metrics.eventsAppended.inc({ type }, n);
    },
  };
}
