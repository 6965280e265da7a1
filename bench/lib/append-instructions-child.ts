/**
 * The process `bench/append-instructions.ts` runs under `valgrind --tool=callgrind` (compiled into
 * the bench build, started with `node -r tsconfig-paths/register`). Argument: `service` (the real
 * service in-process, from the bench build at `APPEND_INSTRUCTIONS_BUILD`, default this one's: fresh data directory, `LOG_LEVEL` as given, no rate limit, defaults otherwise)
 * or `ceiling` (the minimal append server of figure 1, `bench/lib/minimal-append-server.ts`).
 *
 * It sends one-event `POST /v1/sessions/:id/events` through `fastify.inject` ({@link injectAppends}: no
 * socket, 16 in flight on 16 sessions, each event id new), texts from the JSON file
 * `APPEND_INSTRUCTIONS_TEXTS` (the driver writes the bench corpus's first 2,000 messages there), as
 * `bench/append-cpu.ts` does:
 * first `APPEND_INSTRUCTIONS_WARM` appends (default 2,000), then it writes `READY` on stdout and waits
 * for a line on stdin (the driver turns callgrind's instrumentation on), sends
 * `APPEND_INSTRUCTIONS_N` appends (default 400), writes `DONE <n>` and waits for another line (the
 * driver turns instrumentation off), then closes and exits.
 * @throws Error (exit code 1) when an append is not answered 201.
 */
import 'reflect-metadata';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { startMinimalAppendServer } from './minimal-append-server';
import { injectAppends, type Inject } from './inject-appends';

async function main(): Promise<void> {
  const mode = process.argv[2];
  if (mode !== 'service' && mode !== 'ceiling') throw new Error('argument: service | ceiling');
  const dataDir = fs.mkdtempSync(path.join(process.env.BENCH_DIR ?? os.tmpdir(), 'append-instructions-'));
  let inject: Inject;
  let close: () => Promise<void>;
  if (mode === 'service') {
    // The checkout to measure: its bench build (`APPEND_INSTRUCTIONS_BUILD`, default this one's).
    const build = process.env.APPEND_INSTRUCTIONS_BUILD ?? path.join(__dirname, '..', '..');
    /* eslint-disable @typescript-eslint/no-require-imports */
    const { createSessionService } = require(path.join(build, 'apps/session-service/src/create-session-service'));
    const { loadServiceConfig } = require(path.join(build, 'apps/session-service/src/config/service-config'));
    /* eslint-enable @typescript-eslint/no-require-imports */
    const config = loadServiceConfig({ ...process.env, DATA_DIR: dataDir, PORT: '0', RATE_LIMIT_PER_MINUTE: '0', API_KEYS: undefined });
    // Logging as LOG_LEVEL says (the driver's default: silent, as figure 1 runs); `quiet` would force silent.
    const service = await createSessionService(config, { env: process.env });
    const fastify = service.app.getHttpAdapter().getInstance();
    inject = (request) => fastify.inject(request);
    close = () => service.close();
  } else {
    const server = await startMinimalAppendServer(dataDir);
    inject = (request) => server.app.inject(request);
    close = () => server.close();
  }
  const texts = JSON.parse(fs.readFileSync(String(process.env.APPEND_INSTRUCTIONS_TEXTS), 'utf8')) as Array<{ type: string; text: string }>;
  const run = injectAppends(inject, texts);
  const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  const n = Number(process.env.APPEND_INSTRUCTIONS_N ?? 400);
  try {
    await run(Number(process.env.APPEND_INSTRUCTIONS_WARM ?? 2000));
    process.stdout.write('READY\n');
    await lines.next();
    await run(n);
    process.stdout.write(`DONE ${n}\n`);
    await lines.next();
  } finally {
    await close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
