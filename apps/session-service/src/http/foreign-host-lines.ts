/**
 * The warn lines of requests open development mode refuses for their Host (403 `host_not_allowed`,
 * `foreign-host.ts`): an operator who reaches the service by a name it does not answer (a compose
 * service name, a Kubernetes Service DNS name after an upgrade) reads in the log which Host was
 * refused and what to set, once per Host name per minute, whatever else is refused meanwhile.
 *
 * - The first refusal of a Host name writes a line; the same name's refusals in the next
 *   `windowMs` (60 s) are only counted, and its next line, once that minute is over, says how many.
 * - Anyone can send any Host, so distinct names are bounded too: at most {@link LINES_PER_WINDOW}
 *   lines per `windowMs` in all, the rest counted and told in one line at the window's end
 *   (`RateLimitedWarnings`), and at most {@link NAMES_TRACKED} names remembered at a time.
 */
import { Logger } from '@nestjs/common';
import { hostNameOf } from '../config/allowed-hosts';
import { LINE_WINDOW_MS, LINES_PER_WINDOW, RateLimitedWarnings } from '../observability/rate-limited-lines';
import { quoteInput } from '@lib/compaction';

/** Most Host names whose last line is remembered; past it, expired ones are forgotten, then new names are not remembered (their lines stay bounded by the window's count). */
export const NAMES_TRACKED = 1024;

/** The `ALLOWED_HOSTS` part of a line: what the variable holds now (`allowedHosts` as parsed). */
function allowedHostsNow(allowedHosts: readonly string[]): string {
  return allowedHosts.length === 0 ? 'ALLOWED_HOSTS is not set' : `ALLOWED_HOSTS=${allowedHosts.join(',')} does not list it`;
}

/** Writes the lines told in the module documentation through `logger.warn`. */
export class ForeignHostLines {
  /** Host name (lower case; the header's text when it is none) → when its last line was written (ms) and its refusals since, not logged. */
  private readonly names = new Map<string, { loggedAt: number; since: number }>();
  private readonly bound: RateLimitedWarnings;

  /** `allowedHosts`: the parsed `ALLOWED_HOSTS` (named in each line); `windowMs`: a Host's minute, and the bound's window. */
  constructor(
    logger: Pick<Logger, 'warn'>,
    private readonly allowedHosts: readonly string[],
    private readonly windowMs = LINE_WINDOW_MS,
  ) {
    this.bound = new RateLimitedWarnings(logger, 'requests refused 403 host_not_allowed (Host names not logged yet)', LINES_PER_WINDOW, windowMs);
  }

  /**
   * Tells (or counts) one request refused for its `host` (the header's value) with `method`: e.g.
   * `refused GET with Host "session-service:3000": 403 host_not_allowed (open development mode, no API_KEYS; ALLOWED_HOSTS is not set):
   * to answer it, start the service with ALLOWED_HOSTS=session-service (comma-separated with the other names clients use) or set API_KEYS;
   * this Host's refusals in the next 60 s are counted, not logged`.
   */
  refused(method: string, host: string): void {
    const name = hostNameOf(host);
    const key = name ?? host.trim().toLowerCase().slice(0, 256);
    const now = Date.now();
    const seen = this.names.get(key);
    if (seen && now - seen.loggedAt < this.windowMs) {
      seen.since++;
      return;
    }
    const earlier = seen && seen.since > 0 ? ` (${seen.since} more with this Host since its last line, not logged one by one)` : '';
    const fix = name
      ? `to answer it, start the service with ALLOWED_HOSTS=${name} (comma-separated with the other names clients use) or set API_KEYS`
      : 'it is not a host name with an optional port (name[:port] or [IPv6][:port]): the client must send the name it called';
    const seconds = Math.round(this.windowMs / 1000);
    this.bound.warn(
      `refused ${method} with Host ${quoteInput(host)}: 403 host_not_allowed${earlier} (open development mode, no API_KEYS; ${allowedHostsNow(this.allowedHosts)}): ${fix}; this Host's refusals in the next ${seconds} s are counted, not logged`,
      '403 host_not_allowed',
    );
    this.remember(key, now);
  }

  /** Tells the bound's count of lines not written (if any) and stops its timer: call it when the service stops. */
  close(): void {
    this.bound.close();
  }

  private remember(key: string, now: number): void {
    if (!this.names.has(key) && this.names.size >= NAMES_TRACKED) {
      for (const [name, seen] of this.names) if (now - seen.loggedAt >= this.windowMs) this.names.delete(name);
      if (this.names.size >= NAMES_TRACKED) return;
    }
    this.names.set(key, { loggedAt: now, since: 0 });
  }
}

/** The service's {@link ForeignHostLines}, through the `HTTP` logger as the other refused requests' lines; close it when the service stops. */
export function foreignHostLines(allowedHosts: readonly string[]): ForeignHostLines {
  return new ForeignHostLines(new Logger('HTTP'), allowedHosts);
}
