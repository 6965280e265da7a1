/**
 * The real service in-process, listening on an ephemeral port, with the typed client of
 * `libs/client` (the way integrating services call it).
 */
import { createSessionServiceClient, type SessionServiceClient } from '@lib/client';
import { startService, type Harness, type HarnessOptions } from './service-harness';

/** A listening service, its URL, and clients for it. */
export interface ClientHarness extends Harness {
  baseUrl: string;
  /** A typed client, sending `apiKey` when given. */
  client(apiKey?: string): SessionServiceClient;
}

/** Starts the service (see `startService`) and listens on 127.0.0.1 at an ephemeral port. */
export async function startListeningService(options: HarnessOptions = {}): Promise<ClientHarness> {
  const harness = await startService(options);
  await harness.service.app.listen(0, '127.0.0.1');
  const { port } = harness.service.app.getHttpServer().address() as { port: number };
  const baseUrl = `http://127.0.0.1:${port}`;
  return { ...harness, baseUrl, client: (apiKey?: string) => createSessionServiceClient(baseUrl, { apiKey }) };
}
