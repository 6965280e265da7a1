/**
 * How `NATS_URL` is shown in log lines and messages. A file of its own, without the NATS client:
 * the start-up summary imports it, and a service without `NATS_URL` loads no `@nats-io` module.
 */
import { withoutCredentials } from '@lib/event-store';

/** `natsUrl` (comma-separated servers) as log lines and messages show it: each server trimmed, credentials masked ({@link withoutCredentials}). */
export function natsServersShown(natsUrl: string): string {
  return withoutCredentials(
    natsUrl
      .split(',')
      .map((s) => s.trim())
      .join(','),
    { list: true },
  );
}
