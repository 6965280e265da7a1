/**
 * Counts every NATS command the consumer handled in {@link ServiceMetrics}: `nats_commands_total`
 * (by kind, outcome and error code), `nats_commands_redelivered_total` (by kind) and
 * `nats_command_duration_seconds` (by kind and outcome), the NATS side of
 * `http_request_duration_seconds` (http-metrics.ts).
 */
import type { HandledCommand } from '../nats/nats-command-consumer';
import type { ServiceMetrics } from './metrics';

/** The consumer's `onHandled` callback that counts each handled command in `metrics` (whose NATS metrics the health controller registers). */
export function countNatsCommands(metrics: ServiceMetrics): (handled: HandledCommand) => void {
  return ({ kind, outcome, code, redelivered, seconds }) => {
    metrics.natsCommands.inc({ kind, outcome, code });
    if (redelivered) metrics.natsCommandsRedelivered.inc({ kind });
    metrics.natsCommandDuration.observe({ kind, outcome }, seconds);
  };
}
