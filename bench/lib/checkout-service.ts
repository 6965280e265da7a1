/**
 * The service of the checkout a bench runs in, in-process: the working directory's `apps`, `libs`
 * and `node_modules` are the ones loaded (not those beside the bench file), so one bench file,
 * run from the root of a checkout of the build before a change and from this one, measures both.
 * Started on a fresh data directory (under `BENCH_DIR`, default the OS temp dir), quiet, without
 * rate limit nor API keys; requests go through `fastify.inject` (no socket, no HTTP parser). The run
 * ends with one line naming the machine (CPU model, cores, Node version, date) and the load average
 * (1, 5, 15 minutes) before and after, by which two runs on a shared machine are compared.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { ServiceConfig } from '../../apps/session-service/src/config/service-config';
import type { SessionService } from '../../apps/session-service/src/create-session-service';

/** The running service of the checkout, as a bench measures it. */
export interface CheckoutService {
  /** The checkout's root: the working directory. */
  root: string;
  /** A module of the checkout by its path from the root, e.g. `apps/session-service/src/http/request-schemas` (typed by the caller). */
  load: <T>(modulePath: string) => T;
  /** The service's configuration (`maxBodyBytes` in bytes, …), as the checkout loaded it. */
  config: ServiceConfig;
  service: SessionService;
  /** The service's Fastify instance, for `inject`. */
  fastify: FastifyInstance;
}

/**
 * Starts the checkout's service (see the module doc; `label` names its data directory), runs
 * `measure` on it, then closes the service and removes the directory (also when `measure` throws,
 * which is rethrown), and prints the machine and load line on stdout.
 * @throws what loading or starting the checkout's service throws (nothing was started then).
 */
export async function onCheckoutService(label: string, measure: (checkout: CheckoutService) => Promise<void>): Promise<void> {
  const root = process.cwd();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const load = <T>(modulePath: string): T => require(path.join(root, modulePath)) as T;
  const { createSessionService } = load<typeof import('../../apps/session-service/src/create-session-service')>(
    'apps/session-service/src/create-session-service',
  );
  const { loadServiceConfig } = load<typeof import('../../apps/session-service/src/config/service-config')>('apps/session-service/src/config/service-config');
  const loadBefore = os.loadavg();
  const dataDir = fs.mkdtempSync(path.join(process.env.BENCH_DIR ?? os.tmpdir(), `${label}-`));
  const config = loadServiceConfig({ ...process.env, DATA_DIR: dataDir, PORT: '0', RATE_LIMIT_PER_MINUTE: '0', API_KEYS: undefined });
  const service = await createSessionService(config, { quiet: true, env: process.env });
  const fastify: FastifyInstance = service.app.getHttpAdapter().getInstance();
  try {
    await measure({ root, load, config, service, fastify });
  } finally {
    await service.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  const cpus = os.cpus();
  const loads = (l: number[]) => l.map((x) => x.toFixed(1)).join(' ');
  console.log(
    `\n${cpus[0]?.model?.trim() ?? 'unknown'}, ${cpus.length} cores, Node ${process.version}, ${new Date().toISOString()}; load average ${loads(loadBefore)} before, ${loads(os.loadavg())} after`,
  );
}
