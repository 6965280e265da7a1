/**
 * Starts the real service (embedded SQLite store, read models, projector, HTTP on a free port)
 * in a fresh data directory, and a minimal keep-alive HTTP JSON client for it.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSessionService, type SessionService } from '../../apps/session-service/src/create-session-service';
import { loadServiceConfig } from '../../apps/session-service/src/config/service-config';
import { freshDir } from './fresh-dir';

export { freshDir } from './fresh-dir';

/** A running service and how to reach it. */
export interface RunningService {
  service: SessionService;
  baseUrl: string;
  port: number;
  dataDir: string;
  /** Closes the service and removes its data directory. */
  stop(): Promise<void>;
}

/** Starts the service with rate limiting off, quiet logs, on 127.0.0.1 and a free port. */
export async function startService(root: string | undefined, label: string, env: NodeJS.ProcessEnv = {}): Promise<RunningService> {
  const dataDir = freshDir(root, label);
  const config = loadServiceConfig({ ...process.env, ...env, DATA_DIR: dataDir, PORT: '0', RATE_LIMIT_PER_MINUTE: '0', API_KEYS: undefined });
  const service = await createSessionService(config, { quiet: true, env: { ...process.env, ...env } });
  await service.app.listen(0, '127.0.0.1');
  const server = service.app.getHttpServer();
  const port = (server.address() as AddressInfo).port;
  return {
    service,
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    dataDir,
    async stop() {
      await service.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A JSON answer. */
export interface JsonResponse<T = unknown> {
  status: number;
  body: T;
}

/**
 * A small HTTP/1.1 JSON client over one keep-alive agent (no fetch/undici overhead in the
 * numbers). `maxSockets` bounds the concurrent connections.
 */
export class JsonClient {
  private readonly agent: http.Agent;

  constructor(
    private readonly port: number,
    maxSockets = 64,
  ) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets });
  }

  /** Sends a request and parses the JSON answer. Rejects on a network error, never on an HTTP status. */
  request<T = unknown>(method: string, urlPath: string, body?: unknown): Promise<JsonResponse<T>> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: this.port,
          method,
          path: urlPath,
          agent: this.agent,
          headers: payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {},
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown = text;
            try {
              parsed = text ? JSON.parse(text) : null;
            } catch {
              // keep the text
            }
            resolve({ status: res.statusCode ?? 0, body: parsed as T });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      if (payload) req.write(payload);
      req.end();
    });
  }

  /** Closes the idle connections. */
  close(): void {
    this.agent.destroy();
  }
}

/**
 * The frame of a bench that measures a service of its own: starts one ({@link startService} under
 * `BENCH_DIR`, data directory named after `label`), runs `measure` with it and a {@link JsonClient}
 * on it, writes the rows `measure` resolves with to stdout as one JSON line, then closes the client
 * and stops the service (also when `measure` throws). An error is printed on stderr and the process
 * exits with code 1.
 */
export function benchWithService(label: string, measure: (running: RunningService, client: JsonClient) => Promise<unknown[]>): void {
  const main = async (): Promise<void> => {
    const running = await startService(process.env.BENCH_DIR, label);
    const client = new JsonClient(running.port);
    try {
      const results = await measure(running, client);
      process.stdout.write(JSON.stringify(results) + '\n');
    } finally {
      client.close();
      await running.stop();
    }
  };
  void main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
