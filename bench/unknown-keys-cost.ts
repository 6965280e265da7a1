/**
 * What refusing a body with many unknown keys costs the event loop (newcomer ncbounds): a request
 * whose object holds N keys the API does not take is answered 400 by validation, and everything
 * validation does for it runs on the main thread, between two turns of the event loop, so no other
 * request (not even `/health`) is answered meanwhile. Run it from the root of the checkout to
 * measure (its `apps`, `libs` and `node_modules` are the ones loaded), e.g. in a checkout of the
 * build before a change and in this one, to compare them:
 *
 *   cd /path/to/checkout && node -r ts-node/register/transpile-only -r tsconfig-paths/register /path/to/this/bench/unknown-keys-cost.ts
 *
 * It starts the service in-process (fresh data directory, quiet, no rate limit) and sends each body
 * through `fastify.inject` (no socket, no HTTP parser), and the NATS rows through the service's
 * `NatsCommandExecutor` (no server: its command bus never reached, as a refusal needs none): for N =
 * 1 (what any refusal costs), 1k, 10k, 100k and 300k keys (`UNKNOWN_KEYS_SIZES`, comma-separated), the bodies of {@link CASES}
 * (`UNKNOWN_KEYS_ONLY`, a regular expression over their names, keeps some). Per body it prints the
 * event-loop thread's CPU per request (`/proc/<pid>/task/<pid>/schedstat`, which counts in scheduler
 * ticks of 4 ms here: each figure is the mean over enough requests in a row to take ~300,000 keys, at most 200,
 * the least of `UNKNOWN_KEYS_ROUNDS` such runs, default 3), the baseline `JSON.parse` of the same
 * text in the same process (measured the same way), the ratio request / parse, and the answer's
 * status and message length. A body over the service's body limit (`MAX_BODY_BYTES`, 5 MiB) is left
 * out. Then the machine (CPU, cores, Node) and the load average before and after. CPU time, unlike
 * wall time, does not grow with what other processes run, so runs on a loaded machine compare.
 */
import 'reflect-metadata';
import { onCheckoutService } from './lib/checkout-service';
import { leastMeanCpuMs } from './lib/event-loop-cpu';

/** `{"<name(0)>": 1, "<name(1)>": 1, …}` with `n` keys, as JSON text without the braces. */
function members(n: number, name: (i: number) => string): string {
  const parts: string[] = [];
  for (let i = 0; i < n; i++) parts.push(`"${name(i)}":1`);
  return parts.join(',');
}

const k = (i: number) => `k${i}`;

/** A body: its route (or NATS command), and its text for `n` keys. */
interface Case {
  name: string;
  url: string;
  method: 'POST' | 'PUT' | 'NATS';
  body: (n: number) => string;
}

/** The bodies: unknown keys in each place a request holds objects, and a valid body with as many keys (event metadata). */
const CASES: readonly Case[] = [
  { name: 'event, unknown keys', method: 'POST', url: '/v1/sessions/s/events', body: (n) => `{"events":[{"type":"user","text":"x",${members(n, k)}}]}` },
  { name: 'event without text, unknown keys', method: 'POST', url: '/v1/sessions/s/events', body: (n) => `{"events":[{"type":"user",${members(n, k)}}]}` },
  {
    name: 'tool call, unknown keys',
    method: 'POST',
    url: '/v1/sessions/s/events',
    body: (n) => `{"events":[{"type":"assistant","toolCalls":[{"id":"c1","name":"f","arguments":"{}",${members(n, k)}}]}]}`,
  },
  { name: 'body without events, unknown keys', method: 'POST', url: '/v1/sessions/s/events', body: (n) => `{${members(n, k)}}` },
  {
    name: 'message, unknown keys',
    method: 'POST',
    url: '/v1/sessions/s/messages',
    body: (n) => `{"messages":[{"role":"user","content":"x",${members(n, k)}}]}`,
  },
  {
    name: 'compaction, unknown keys',
    method: 'POST',
    url: '/v1/sessions/s/compactions',
    body: (n) => `{"strategy":{"type":"sliding-window"},${members(n, k)}}`,
  },
  {
    name: 'strategy, near misses',
    method: 'POST',
    url: '/v1/sessions/s/compactions',
    body: (n) => `{"strategy":{"type":"sliding-window",${members(n, (i) => `maxEventz${i}`)}}}`,
  },
  { name: 'strategy without type', method: 'POST', url: '/v1/sessions/s/compactions', body: (n) => `{"strategy":{${members(n, (i) => `maxEventz${i}`)}}}` },
  {
    name: 'trigger, unknown keys',
    method: 'POST',
    url: '/v1/sessions/s/compactions',
    body: (n) => `{"strategy":{"type":"sliding-window"},"trigger":{"type":"turn-count","maxTurns":2,${members(n, (i) => `thresh${i}`)}}}`,
  },
  { name: 'policy, unknown keys', method: 'PUT', url: '/v1/sessions/s/policy', body: (n) => `{"strategy":{"type":"sliding-window"},${members(n, k)}}` },
  { name: 'NATS append, unknown keys', method: 'NATS', url: 'append', body: (n) => `{"events":[{"type":"user","text":"x",${members(n, k)}}]}` },
  {
    name: 'NATS compact, strategy near misses',
    method: 'NATS',
    url: 'compact',
    body: (n) => `{"strategy":{"type":"sliding-window",${members(n, (i) => `maxEventz${i}`)}}}`,
  },
  {
    name: 'a key given twice, last',
    method: 'POST',
    url: '/v1/sessions/s/events',
    body: (n) => `{"events":[{"type":"user","text":"x",${members(n, k)},"k0":2}]}`,
  },
  {
    name: 'event metadata (valid up to 64 KiB)',
    method: 'POST',
    url: '/v1/sessions/m/events',
    body: (n) => `{"events":[{"type":"user","text":"x","metadata":{${members(n, k)}}}]}`,
  },
];

/** One request of a case: its status and message. */
type Send = (c: Case, payload: string) => Promise<{ status: number; message: string }>;

async function main(): Promise<void> {
  await onCheckoutService('unknown-keys', async ({ root, load, config, fastify }) => {
    const { requestSchemas } = load<typeof import('../apps/session-service/src/http/request-schemas')>('apps/session-service/src/http/request-schemas');
    const { NatsCommandExecutor } = load<typeof import('../apps/session-service/src/nats/nats-command-executor')>(
      'apps/session-service/src/nats/nats-command-executor',
    );
    const { commandSubject } = load<typeof import('../apps/session-service/src/nats/nats-names')>('apps/session-service/src/nats/nats-names');
    // A refusal never reaches the command bus nor the store (its answer's basis is read and fails: none).
    const bus = { execute: () => Promise.reject(new Error('not reached')) };
    const nats = new NatsCommandExecutor(bus as never, {} as never, requestSchemas(config), {
      prefix: 'smc',
      tenants: new Set(['t']),
      maxBodyBytes: config.maxBodyBytes,
    });
    const send: Send = async (c, payload) => {
      if (c.method === 'NATS') {
        const data = new TextEncoder().encode(payload);
        const answer = await nats.execute({ subject: commandSubject('smc', 't', 's', c.url), data, commandId: 'c1', redelivered: false });
        return { status: answer.status, message: (answer.body as { message?: string }).message ?? '' };
      }
      const res = await fastify.inject({ method: c.method, url: c.url, headers: { 'content-type': 'application/json' }, payload });
      return { status: res.statusCode, message: (JSON.parse(res.body) as { message?: string }).message ?? '' };
    };
    const sizes = (process.env.UNKNOWN_KEYS_SIZES ?? '1,1000,10000,100000,300000').split(',').map(Number);
    const only = new RegExp(process.env.UNKNOWN_KEYS_ONLY ?? '');
    const rounds = Number(process.env.UNKNOWN_KEYS_ROUNDS ?? 3);
    console.log(`${root}: event-loop CPU per request (ms), against JSON.parse of the same body`);
    console.log('| body | keys | bytes | status | message chars | request ms | JSON.parse ms | request / parse |');
    console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
    for (const c of CASES.filter((x) => only.test(x.name))) {
      for (const n of sizes) {
        const payload = c.body(n);
        const bytes = Buffer.byteLength(payload);
        const row = `| ${c.name} | ${n.toLocaleString('en-US')} | ${bytes.toLocaleString('en-US')} |`;
        if (bytes > config.maxBodyBytes) {
          console.log(`${row} over the body limit | | | | |`);
          continue;
        }
        const reps = Math.min(200, Math.max(1, Math.round(300_000 / n)));
        const parse = await leastMeanCpuMs(rounds, reps, () => JSON.parse(payload) as unknown);
        const request = await leastMeanCpuMs(rounds, reps, () => send(c, payload));
        const { status, message } = request.result;
        console.log(
          `${row} ${status} | ${message.length} | ${request.ms.toFixed(2)} | ${parse.ms.toFixed(2)} | ${parse.ms < 0.01 ? '—' : `${(request.ms / parse.ms).toFixed(1)}×`} |`,
        );
      }
    }
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
