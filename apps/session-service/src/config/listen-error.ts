/**
 * Why the HTTP server could not listen on `HOST`:`PORT`, in the operator's terms: the variable to
 * fix instead of the socket's error code alone.
 */
import { ConfigurationError } from './configuration-error';

/**
 * `err` (from listening on `host`:`port`) as a {@link ConfigurationError} naming the variable when
 * it is a configuration mistake: `HOST` not found (`ENOTFOUND`, `EAI_AGAIN`: no such name) or not an
 * address of this machine (`EADDRNOTAVAIL`); `PORT` in use (`EADDRINUSE`) or not allowed (`EACCES`).
 * Any other error is returned unchanged.
 */
export function listenError(err: unknown, host: string, port: number): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new ConfigurationError({
        variable: 'HOST',
        value: host,
        problem: `the host name was not found (${code})`,
        fix: 'use an address of this machine, e.g. 127.0.0.1 or 0.0.0.0',
      });
    case 'EADDRNOTAVAIL':
      return new ConfigurationError({
        variable: 'HOST',
        value: host,
        problem: `not an address of this machine (${code})`,
        fix: 'use one of its addresses, e.g. 127.0.0.1 or 0.0.0.0',
      });
    case 'EADDRINUSE':
      return new ConfigurationError({
        variable: 'PORT',
        value: port,
        problem: `already in use on ${host} (${code})`,
        fix: 'stop the other process or choose another PORT (0 picks a free one)',
      });
    case 'EACCES':
      return new ConfigurationError({
        variable: 'PORT',
        value: port,
        problem: `not allowed on ${host} (${code})`,
        fix: 'use a port from 1024 to 65535, or 0 for a free one',
      });
    default:
      return err;
  }
}
