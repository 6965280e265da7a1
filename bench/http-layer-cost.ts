/**
 * The HTTP layer's CPU per append request, two builds of `apps/session-service` in one process,
 * interleaved in small slices (docs/performance.md, item 1). Each build runs as a service of its own
 * (fresh data directory) and gets `POST /v1/sessions/:id/events` with one event through
 * `fastify.inject` (no socket), 16 requests in flight, with its append command handler stubbed to
 * answer the result of a real append made at start: what is measured is the hooks, reading the JSON
 * body, validation, Nest's pipeline (guards, parameters, the answer), the command bus and the answer,
 * not the store, the token counts or the projector. Slices of `HTTP_LAYER_SLICE` requests (default
 * 200) alternate between the builds (A B, then B A) for `HTTP_LAYER_ROUNDS` rounds (default 200); the
 * figure is the event-loop thread's own CPU time (`/proc/<pid>/task/<pid>/schedstat`) per request.
 *
 *   cp -a apps/session-service /tmp/old/apps/   # from a checkout of the other build
 *   HTTP_LAYER_A=/tmp/old HTTP_LAYER_B=$PWD node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/http-layer-cost.ts
 *
 * `HTTP_LAYER_REAL=1` does not stub the handler: each request is a whole append (validation, token
 * counts, the decision, the hand-off to the store's writer thread, the projector on the event loop;
 * every event id new), and it also prints the process's CPU (all threads, the writer's included) per
 * request. `HTTP_LAYER_PATCH` names a module exporting `patch(label, app)`, called with each build's
 * label and Nest application once it has started, to put the old code of a library change in one of
 * them (both builds share `libs`), e.g. by replacing a provider's method.
 *
 * `HTTP_LAYER_A` and `HTTP_LAYER_B` are directories holding `apps/session-service` (default: this
 * checkout for both, an A/A run that shows the noise); both builds share this checkout's `libs` and
 * `node_modules`. `HTTP_LAYER_LOGS=A`, `B` or `AB` starts those builds with logging as `npm start`
 * has it (`LOG_LEVEL=info`, request lines at debug, so none written) instead of `LOG_LEVEL=silent`.
 * It prints each build's CPU per request (min, p25, median over slices), the ratio B/A of the summed
 * CPU with a bootstrap 95% interval, and whether the last answers of the two builds were the same
 * (status, headers but `x-request-id` and `date`, body). Garbage collection falls in whichever slice
 * fills the young generation, so single slices vary a lot: compare the summed figure, and run both
 * orders (swap A and B), since the second service started may differ a little.
 */
import 'reflect-metadata';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AppendSessionEventsHandler } from '@lib/session';
import { corpus, textMessages } from './lib/corpus';
import { freshDir } from './lib/service';
import type { createSessionService } from '../apps/session-service/src/create-session-service';
import type { loadServiceConfig } from '../apps/session-service/src/config/service-config';

/** The event-loop thread's CPU time so far (ns). */
function eventLoopCpuNs(): number {
  return Number(fs.readFileSync(`/proc/${process.pid}/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]);
}

/** A build's service, its stubbed append handler answering a real append's result. */
async function start(root: string, label: 'A' | 'B') {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const create = (require(path.join(root, 'apps/session-service/src/create-session-service')) as { createSessionService: typeof createSessionService })
    .createSessionService;
  const load = (require(path.join(root, 'apps/session-service/src/config/service-config')) as { loadServiceConfig: typeof loadServiceConfig })
    .loadServiceConfig;
  /* eslint-enable @typescript-eslint/no-require-imports */
  const dataDir = freshDir(process.env.BENCH_DIR, `http-layer-${label}`);
  const config = load({ ...process.env, DATA_DIR: dataDir, PORT: '0', RATE_LIMIT_PER_MINUTE: '0', API_KEYS: undefined });
  const logs = (process.env.HTTP_LAYER_LOGS ?? '').includes(label);
  const service = await create(logs ? { ...config, logLevel: 'info', requestLogLevel: 'debug' } : config, { quiet: !logs, env: process.env });
  const fastify = service.app.getHttpAdapter().getInstance();
  const real = await fastify.inject({ method: 'POST', url: '/v1/sessions/warm/events', payload: { events: [{ type: 'user', text: 'hello' }] } });
  if (real.statusCode !== 201) throw new Error(`${label}: the first append answered ${real.statusCode} ${real.body}`);
  const answer = real.body;
  if (process.env.HTTP_LAYER_PATCH) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const patch = require(path.resolve(process.env.HTTP_LAYER_PATCH)) as { patch: (label: 'A' | 'B', app: typeof service.app) => void };
    patch.patch(label, service.app);
  }
  if (process.env.HTTP_LAYER_REAL !== '1') {
    const handler = service.app.get(AppendSessionEventsHandler, { strict: false });
    handler.execute = () => Promise.resolve(JSON.parse(answer) as never);
  }
  return { label, service, dataDir, fastify };
}

function quantile(xs: number[], p: number): number {
  return [...xs].sort((x, y) => x - y)[Math.floor((xs.length - 1) * p)];
}

async function main(): Promise<void> {
  const here = path.resolve(__dirname, '..');
  const texts = textMessages(corpus().conversations).slice(0, 2000);
  // Each request's event id is new (a real append would take a repeated one for a resend).
  let sent = 0;
  const payload = (): string => {
    const t = texts[sent % texts.length];
    return JSON.stringify({ events: [{ id: `e${sent++}`, type: t.type, text: t.text }] });
  };
  const a = await start(process.env.HTTP_LAYER_A ?? here, 'A');
  const b = await start(process.env.HTTP_LAYER_B ?? here, 'B');
  const rounds = Number(process.env.HTTP_LAYER_ROUNDS ?? 200);
  const perSlice = Number(process.env.HTTP_LAYER_SLICE ?? 200);
  const ns: Record<'A' | 'B', number[]> = { A: [], B: [] };
  const processNs: Record<'A' | 'B', number[]> = { A: [], B: [] };
  const answers: Record<string, string> = {};
  const slice = async (t: typeof a): Promise<[number, number]> => {
    const before = eventLoopCpuNs();
    const processBefore = process.cpuUsage();
    let left = perSlice;
    const lane = async (k: number) => {
      while (left-- > 0) {
        const res = await t.fastify.inject({
          method: 'POST',
          url: `/v1/sessions/load-${k}/events`,
          headers: { 'content-type': 'application/json' },
          payload: payload(),
        });
        if (res.statusCode !== 201) throw new Error(`${t.label}: ${res.statusCode} ${res.body}`);
        if (left <= 0)
          answers[t.label] = JSON.stringify({
            status: res.statusCode,
            headers: { ...res.headers, 'x-request-id': undefined, date: undefined },
            body: res.body,
          });
      }
    };
    await Promise.all(Array.from({ length: 16 }, (_, k) => lane(k)));
    const used = process.cpuUsage(processBefore);
    return [(eventLoopCpuNs() - before) / perSlice, ((used.user + used.system) * 1000) / perSlice];
  };
  try {
    for (let warm = 0; warm < 3; warm++) for (const t of [a, b]) await slice(t);
    for (let r = 0; r < rounds; r++)
      for (const t of r % 2 === 0 ? [a, b] : [b, a]) {
        const [loopNs, allNs] = await slice(t);
        ns[t.label].push(loopNs);
        processNs[t.label].push(allNs);
      }
  } finally {
    for (const t of [a, b]) {
      await t.service.close();
      fs.rmSync(t.dataDir, { recursive: true, force: true });
    }
  }
  const sum = (xs: number[]) => xs.reduce((x, y) => x + y, 0);
  const boot: number[] = [];
  for (let k = 0; k < 2000; k++) {
    let sa = 0;
    let sb = 0;
    for (let j = 0; j < rounds; j++) {
      const i = Math.floor(Math.random() * rounds);
      sa += ns.A[i];
      sb += ns.B[i];
    }
    boot.push(sb / sa);
  }
  const load = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  for (const k of ['A', 'B'] as const)
    process.stdout.write(
      `${k}: µs of event-loop CPU per request: min ${(Math.min(...ns[k]) / 1000).toFixed(1)}, p25 ${(quantile(ns[k], 0.25) / 1000).toFixed(1)}, median ${(quantile(ns[k], 0.5) / 1000).toFixed(1)}\n`,
    );
  if (process.env.HTTP_LAYER_REAL === '1')
    for (const k of ['A', 'B'] as const)
      process.stdout.write(
        `${k}: µs of process CPU (all threads) per request: min ${(Math.min(...processNs[k]) / 1000).toFixed(1)}, p25 ${(quantile(processNs[k], 0.25) / 1000).toFixed(1)}, median ${(quantile(processNs[k], 0.5) / 1000).toFixed(1)}; B/A summed ${k === 'B' ? (sum(processNs.B) / sum(processNs.A)).toFixed(3) : '-'}\n`,
      );
  process.stdout.write(
    `B/A of the summed CPU: ${(sum(ns.B) / sum(ns.A)).toFixed(3)} (bootstrap 95%: ${quantile(boot, 0.025).toFixed(3)}–${quantile(boot, 0.975).toFixed(3)}); ${rounds} rounds × ${perSlice} requests each; load average ${load}\n`,
  );
  process.stdout.write(`last answers the same (status, headers but x-request-id and date, body): ${answers.A === answers.B}\n`);
}

void main();
