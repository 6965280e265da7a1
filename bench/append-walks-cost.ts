/**
 * What a large append costs the event loop against reading its body (newcomer: a valid append of 80
 * events of ~6,000 metadata keys each, a 4.7 MB body, held the event loop ~0.7 s, 10–15× its
 * `JSON.parse`: the metadata checks, the store and the projector each walked or serialized the
 * metadata again), and what a refusal of many invalid tool calls or tool responses costs (10–11× its
 * `JSON.parse`, spent in the null-optional pass over the whole body). Run it from the root of the
 * checkout to measure (its `apps`, `libs` and `node_modules` are the ones loaded), e.g. in a checkout
 * of the build before a change and in this one, to compare them:
 *
 *   cd /path/to/checkout && node -r ts-node/register/transpile-only -r tsconfig-paths/register /path/to/this/bench/append-walks-cost.ts
 *
 * It starts the service in-process (fresh data directory, quiet, no rate limit) and sends each body
 * through `fastify.inject` (no socket, no HTTP parser). Per body of {@link CASES}
 * (`APPEND_WALKS_ONLY`, a regular expression over their names, keeps some) it prints the event-loop
 * thread's CPU (`/proc/<pid>/task/<pid>/schedstat`, which counts in scheduler ticks of 4 ms here)
 * of the request until its answer, and for an accepted append also until the projector has applied
 * it (a `GET …/window?minPosition=` of the append's position, answered once the read models hold it:
 * the projector's work runs on the event loop in between), each the mean over enough requests in a
 * row to send ~4 MB ("in a row"; an append goes to a new session each time), the least of
 * `APPEND_WALKS_ROUNDS` such runs (default 3); the baseline `JSON.parse` of the same texts in the
 * same process (measured the same way); and the ratios
 * request / parse and request + projection / parse. Then the machine (CPU, cores, Node) and the
 * load average before and after. CPU time, unlike wall time, does not grow with what other
 * processes run, so runs on a loaded machine compare (a JSON.parse of these bodies is itself slower
 * on a loaded machine: compare the ratios).
 */
import 'reflect-metadata';
import { onCheckoutService } from './lib/checkout-service';
import { eventLoopCpuMs, meanCpuMs } from './lib/event-loop-cpu';

/** `{"k0":1,"k1":1,…}` with `n` keys: metadata of ~58 KB (its 64 KiB limit) at 6,000 keys. */
function metadataText(n: number): string {
  const parts: string[] = [];
  for (let i = 0; i < n; i++) parts.push(`"k${i}":1`);
  return `{${parts.join(',')}}`;
}

/** `n` copies of `item` (JSON text) as a JSON array's text. */
const many = (n: number, item: string) => `[${Array.from({ length: n }, () => item).join(',')}]`;

/** A body: its text (`round` makes its texts unique, so a resend is never taken for a retry), and whether it is an accepted append. */
interface Case {
  name: string;
  accepted: boolean;
  body: (round: number) => string;
}

const CASES: readonly Case[] = [
  {
    name: '1 event, metadata of 6,000 keys',
    accepted: true,
    body: (r) => `{"events":[{"type":"user","text":"x${r}","metadata":${metadataText(6000)}}]}`,
  },
  {
    name: '80 events, metadata of 6,000 keys each',
    accepted: true,
    body: (r) => {
      const metadata = metadataText(6000);
      return `{"events":[${Array.from({ length: 80 }, (_, i) => `{"type":"user","text":"x${r}-${i}","metadata":${metadata}}`).join(',')}]}`;
    },
  },
  {
    name: '80 events, metadata of 600 keys, 10 levels deep',
    accepted: true,
    body: (r) => {
      let metadata = metadataText(600);
      for (let d = 0; d < 9; d++) metadata = `{"d${d}":${metadata},"s${d}":"text ${d}"}`;
      return `{"events":[${Array.from({ length: 80 }, (_, i) => `{"type":"user","text":"x${r}-${i}","metadata":${metadata}}`).join(',')}]}`;
    },
  },
  {
    name: '1000 events x 128 toolCalls {} (refused)',
    accepted: false,
    body: () => `{"events":${many(1000, `{"type":"assistant","text":"x","toolCalls":${many(128, '{}')}}`)}}`,
  },
  {
    name: '1000 events x 128 responses {} (refused)',
    accepted: false,
    body: () => `{"events":${many(1000, `{"type":"tool","responses":${many(128, '{}')}}`)}}`,
  },
  {
    name: '1000 events x 1024 textParts {} (refused)',
    accepted: false,
    body: () => `{"events":${many(1000, `{"type":"user","text":"x","textParts":${many(1024, '{}')}}`)}}`,
  },
];

async function main(): Promise<void> {
  await onCheckoutService('append-walks', async ({ root, fastify }) => {
    const only = new RegExp(process.env.APPEND_WALKS_ONLY ?? '');
    const rounds = Number(process.env.APPEND_WALKS_ROUNDS ?? 3);
    console.log(`${root}: event-loop CPU (ms), against JSON.parse of the same body`);
    console.log('| body | bytes | in a row | status | request ms | + projection ms | JSON.parse ms | request / parse | request + projection / parse |');
    console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
    let session = 0;
    for (const c of CASES.filter((x) => only.test(x.name))) {
      const bytes = Buffer.byteLength(c.body(0));
      // Enough requests in a row for ~4 MB of body, so that the scheduler's 4 ms ticks average out.
      const reps = Math.max(1, Math.round(4_000_000 / bytes));
      let parse = Infinity;
      let request = Infinity;
      let projected = Infinity;
      let status = 0;
      for (let r = 0; r < rounds; r++) {
        const payloads = Array.from({ length: reps }, (_, i) => c.body(r * reps + i));
        parse = Math.min(parse, (await meanCpuMs(reps, (i) => JSON.parse(payloads[i]) as unknown)).ms);
        // Each request in two parts, until its answer and until the projector applied it: one meanCpuMs could not split them.
        let requestMs = 0;
        let projectedMs = 0;
        for (const payload of payloads) {
          const sessionId = `s${session++}`;
          const t = eventLoopCpuMs();
          const res = await fastify.inject({
            method: 'POST',
            url: `/v1/sessions/${sessionId}/events`,
            headers: { 'content-type': 'application/json' },
            payload,
          });
          const answered = eventLoopCpuMs();
          requestMs += answered - t;
          status = res.statusCode;
          if (!c.accepted) continue;
          const { position } = JSON.parse(res.body) as { position: string };
          const window = await fastify.inject({ method: 'GET', url: `/v1/sessions/${sessionId}/window?minPosition=${position}&estimator=chars` });
          if (window.statusCode !== 200) throw new Error(`window: ${window.statusCode} ${window.body}`);
          projectedMs += eventLoopCpuMs() - answered;
        }
        request = Math.min(request, requestMs / reps);
        projected = Math.min(projected, projectedMs / reps);
      }
      const ratio = (ms: number) => `${(ms / parse).toFixed(2)}×`;
      const digits = (ms: number) => ms.toFixed(ms < 10 ? 2 : 0);
      const projection = c.accepted ? digits(projected) : '—';
      const total = c.accepted ? ratio(request + projected) : '—';
      console.log(
        `| ${c.name} | ${bytes.toLocaleString('en-US')} | ${reps} | ${status} | ${digits(request)} | ${projection} | ${digits(parse)} | ${ratio(request)} | ${total} |`,
      );
    }
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
