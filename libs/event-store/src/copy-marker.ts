/**
 * The mark `npm run copy-store` leaves on a target while it copies into it: the table
 * {@link COPY_MARKER_TABLE} (same name in SQLite and PostgreSQL), created with one row before the
 * first event is written and dropped once the copy is verified. A store holding it holds a partial
 * (or unverified) copy: the SQLite and PostgreSQL stores refuse to be used on it
 * (EventStoreCopyInProgressError), unless opened by the copy itself (`acceptCopyInProgress`).
 */
import * as os from 'node:os';

/** The marker table's name. */
export const COPY_MARKER_TABLE = 'es_copy_in_progress';

/** The marker's row: when the copy began, what it copies from, and the copying process (absent in marks older copies left). */
export interface CopyMarker {
  /** When the copy began (ms precision). */
  started: Date;
  /** The source, as the copy named it (credentials masked), e.g. `/var/lib/sessions/events.sqlite`. */
  source: string;
  /** The copying process's id (`process.pid`). */
  pid?: number;
  /** The host the copy runs on (`os.hostname()`). */
  host?: string;
}

/**
 * Whether the copy that left `marker` may still be running: it recorded its pid and host, `host`
 * (default: this machine's `os.hostname()`) is that host, and a process with that pid exists (signal
 * 0 delivered, or refused with EPERM: another user's). A process that has reused the pid since counts
 * as running too (the safe side: refusing to empty a copy is undone by ending that process or by
 * deleting the target by hand). False for a mark without pid and host (an older copy's).
 */
export function copyMayStillRun(marker: CopyMarker, host: string = os.hostname()): boolean {
  if (marker.pid === undefined || marker.host === undefined || marker.host !== host) return false;
  if (marker.pid === process.pid) return true;
  try {
    process.kill(marker.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The marker a marker table without its row stands for (a copy's mark all the same). */
export const UNKNOWN_COPY_MARKER: CopyMarker = { started: new Date(0), source: 'an unknown source' };

/** The {@link CopyMarker} of a marker table's row (`pid` and `host` null or absent: a mark without them). */
export function markerOfRow(row: { started: Date; source: string; pid?: number | string | null; host?: string | null }): CopyMarker {
  const marker: CopyMarker = { started: row.started, source: row.source };
  if (row.pid !== undefined && row.pid !== null) marker.pid = Number(row.pid);
  if (row.host !== undefined && row.host !== null) marker.host = row.host;
  return marker;
}

/** One phrase describing `marker` for messages, e.g. `copy-store began copying /a/events.sqlite into it at 2026-12-03T21:00:00.000Z`. */
export function describeCopyMarker(marker: CopyMarker): string {
  return marker === UNKNOWN_COPY_MARKER
    ? 'copy-store began copying a log into it'
    : `copy-store began copying ${marker.source} into it at ${marker.started.toISOString()}`;
}
