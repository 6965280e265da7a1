/**
 * The start-up warning of open development mode reached from elsewhere: without `API_KEYS` the
 * service answers only requests whose `Host` is localhost, `*.localhost`, an IP address or a name of
 * `ALLOWED_HOSTS` (against DNS rebinding, `allowed-hosts.ts`). Listening on a non-loopback address
 * (`HOST=0.0.0.0` in the image, a pod or bridge address) means clients on other machines will come,
 * and they call it by a name (a compose service name, a Kubernetes Service's DNS name, a proxy that
 * passes the client's `Host` on): each such request is answered 403 `host_not_allowed`, while the
 * probes (`/health*`, `/metrics`, answered whatever the Host) keep the replica in rotation. An upgrade
 * from a release without the check turns every such call into a 403: the line says so before any does.
 */
import { isIP } from 'node:net';
import type { ServiceConfig } from './service-config';

/** Whether `host` (HOST, without brackets) is a loopback address or name: 127.0.0.0/8, ::1, ::ffff:127.x.x.x, localhost or a name under .localhost. */
export function isLoopbackHost(host: string): boolean {
  const value = host.trim().toLowerCase().replace(/\.$/, '');
  if (value === 'localhost' || value.endsWith('.localhost')) return true;
  if (isIP(value) === 4) return value.startsWith('127.');
  if (isIP(value) === 6) return value === '::1' || value === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(value);
  return false;
}

/**
 * The one warn line (in a list, empty when it does not apply): `API_KEYS` unset, `ALLOWED_HOSTS`
 * unset, and `HOST` not a loopback address ({@link isLoopbackHost}). Names what will be refused
 * and the variable to set.
 */
export function openModeHostWarningLines(config: Pick<ServiceConfig, 'apiKeys' | 'allowedHosts' | 'host'>): string[] {
  if (config.apiKeys.size > 0 || config.allowedHosts.length > 0 || isLoopbackHost(config.host)) return [];
  return [
    `open development mode (no API_KEYS) listening on ${config.host}, not only the loopback, without ALLOWED_HOSTS: ` +
      'a /v1, /ui or /docs request whose Host is a name (a compose service name such as session-service, a Kubernetes Service name ' +
      "such as session-service.default.svc.cluster.local, a proxy passing the client's Host on) is refused 403 host_not_allowed, " +
      'against DNS rebinding; only localhost, *.localhost and IP addresses are answered (the probes /health, /health/ready and /metrics ' +
      'answer any Host, so a load balancer keeps this replica in rotation); set ALLOWED_HOSTS to the names clients use (comma-separated, ' +
      'e.g. ALLOWED_HOSTS=session-service,.svc.cluster.local), or set API_KEYS',
  ];
}
