import { createHash, type Hash } from 'node:crypto';
import type { RecordedEvent } from '@lib/event-store';

/** What {@link LogDigest.result} gives: the event count, the count per stream and a SHA-256 of every event's content. */
export interface LogDigestResult {
  /** Events seen. */
  events: number;
  /** Events seen per stream name. */
  perStream: Map<string, number>;
  /** SHA-256 (hex) of every event's stream, revision, id, type, data, metadata and time recorded (ms), in the order seen. */
  sha256: string;
}

/**
 * A digest of a log read in position order, independent of the positions themselves (a copy may
 * number them differently): each event's stream, revision, id, type, data (JSON text), metadata
 * (JSON text or none) and `created` (ISO-8601, ms), one line each, so two logs with the same events in the
 * same order have the same digest.
 */
export class LogDigest {
  private readonly hash: Hash = createHash('sha256');
  private readonly perStream = new Map<string, number>();
  private events = 0;

  /** Adds `events` (in position order, after the ones added before). */
  add(events: readonly RecordedEvent[]): void {
    for (const e of events) {
      this.hash.update(
        `${JSON.stringify([e.streamId, e.revision.toString(), e.id, e.type, JSON.stringify(e.data), e.metadata === undefined ? null : JSON.stringify(e.metadata), e.created.toISOString()])}\n`,
      );
      this.perStream.set(e.streamId, (this.perStream.get(e.streamId) ?? 0) + 1);
      this.events += 1;
    }
  }

  /** The digest of everything added; call once. */
  result(): LogDigestResult {
    return { events: this.events, perStream: this.perStream, sha256: this.hash.digest('hex') };
  }
}

/**
 * The first way `target` differs from `source` (one sentence), or null when they agree: the event
 * counts, a stream's count (the first in name order that differs), the digest.
 */
export function digestMismatch(source: LogDigestResult, target: LogDigestResult): string | null {
  if (source.events !== target.events) return `the source holds ${source.events} events, the target ${target.events}`;
  const streams = [...new Set([...source.perStream.keys(), ...target.perStream.keys()])].sort();
  for (const stream of streams) {
    const a = source.perStream.get(stream) ?? 0;
    const b = target.perStream.get(stream) ?? 0;
    if (a !== b) return `stream ${stream}: ${a} events in the source, ${b} in the target`;
  }
  if (source.sha256 !== target.sha256)
    return `same counts, but the events' content differs (digest ${source.sha256} in the source, ${target.sha256} in the target)`;
  return null;
}
