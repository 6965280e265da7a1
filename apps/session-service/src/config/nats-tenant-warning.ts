/**
 * The start-up warning of a multi-tenant service whose NATS transport authenticates nobody: with
 * `API_KEYS` the HTTP API needs a key per tenant, but a NATS command's tenant is only its subject's
 * tenant token (`<prefix>.commands.<tenant>.…`). Only the NATS server's accounts and permissions
 * keep one tenant's clients off another tenant's subjects (docs/nats.md, "Tenants"), and a service
 * connecting without credentials (no user part in `NATS_URL`, no `NATS_USER`) is most likely on a
 * server that has none: any client may then publish as any tenant and read every tenant's answers.
 */
import { natsConnectionTarget } from './nats-credentials';
import type { ServiceConfig } from './service-config';

/**
 * The one warn line (in a list, empty when it does not apply): `API_KEYS` set, `NATS_URL` set, and
 * the NATS connection carries no credentials. Names what to do: per-tenant NATS accounts (the
 * example `deploy/nats/nats-server.conf`) and credentials for the service.
 */
export function natsTenantWarningLines(config: Pick<ServiceConfig, 'apiKeys' | 'natsUrl' | 'natsUser' | 'natsPassword' | 'natsPrefix'>): string[] {
  if (config.apiKeys.size === 0 || !config.natsUrl) return [];
  const { credentials } = natsConnectionTarget(config.natsUrl, { natsUser: config.natsUser, natsPassword: config.natsPassword });
  if (Object.keys(credentials).length > 0) return [];
  const p = config.natsPrefix;
  return [
    `NATS commands are not authenticated by API_KEYS: a command's tenant is its subject (${p}.commands.<tenant>.>), and the NATS connection ` +
      'carries no credentials (no user in NATS_URL, no NATS_USER), so any client of this NATS server may act as any tenant and read every ' +
      `tenant's results and decisions; give each tenant its own NATS account limited to its own subjects (example: deploy/nats/nats-server.conf; docs/nats.md, "Tenants") and the service a user of its own`,
  ];
}
