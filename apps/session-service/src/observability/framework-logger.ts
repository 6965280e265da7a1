/**
 * The logger Nest's own lines go through: the service's pino logger, with Nest's route-mapping
 * lines (`HealthController {/health}:`, `Mapped {/health, GET} route`, some 30 at every start)
 * moved from info to debug, so a start at the default `LOG_LEVEL=info` shows the service's summary
 * lines, not the route table; `LOG_LEVEL=debug` still shows them.
 */
import type { LoggerService } from '@nestjs/common';

/** Nest's log contexts whose `log` (info) lines map routes: moved to debug. */
export const ROUTE_MAPPING_CONTEXTS: ReadonlySet<string> = new Set(['RoutesResolver', 'RouterExplorer']);

/** `inner` (the service's logger), with the info lines of {@link ROUTE_MAPPING_CONTEXTS} written at debug; everything else as it is. */
export class FrameworkLogger implements LoggerService {
  constructor(private readonly inner: LoggerService) {}

  /** Info, or debug for a route-mapping line (Nest passes the context as the last parameter). */
  log(message: unknown, ...optionalParams: unknown[]): void {
    const context = optionalParams[optionalParams.length - 1];
    if (typeof context === 'string' && ROUTE_MAPPING_CONTEXTS.has(context) && this.inner.debug) this.inner.debug(message, ...optionalParams);
    else this.inner.log(message, ...optionalParams);
  }

  error(message: unknown, ...optionalParams: unknown[]): void {
    this.inner.error(message, ...optionalParams);
  }

  warn(message: unknown, ...optionalParams: unknown[]): void {
    this.inner.warn(message, ...optionalParams);
  }

  debug(message: unknown, ...optionalParams: unknown[]): void {
    this.inner.debug?.(message, ...optionalParams);
  }

  verbose(message: unknown, ...optionalParams: unknown[]): void {
    this.inner.verbose?.(message, ...optionalParams);
  }

  fatal(message: unknown, ...optionalParams: unknown[]): void {
    (this.inner.fatal ?? this.inner.error).call(this.inner, message, ...optionalParams);
  }
}
