/**
 * The documentation's examples run as pasted (issue 17 item 8): README.md's Try it block and the
 * marked blocks of docs/*.md (API keys, the typed client). Every fenced shell block right after a
 * `<!-- readme-test: run -->` comment runs in bash against a started service (localhost:3000
 * replaced by its random port) and must succeed: `set -euo pipefail`, and curl fails on an HTTP
 * error status. A block after `<!-- readme-test: run with API_KEYS -->` starts the service with
 * the `API_KEYS` it shows (its `npm start` line is the service) and runs its other lines. Blocks
 * without a marker (installation, `npm` commands) are not run, so sections can be added freely;
 * a `ts` block after `<!-- readme-test: typecheck and run -->` (the typed client) is type-checked
 * with the repository's compiler options and run against a started service;
 * a marked block that fails names its heading.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import * as ts from 'typescript';
import { loadServiceConfig } from '../../apps/session-service/src/config/service-config';
import { startService, type Harness } from '../support/service-harness';
import { documentation } from '../support/documentation';
import { documentedBlocks, INTEGRATOR_STRICT_OPTIONS, type MarkedBlock } from '../support/readme-blocks';

/** What a block's run gave: its standard output, and the HTTP status and body of each curl call in order. */
interface BlockRun {
  stdout: string;
  statuses: number[];
  bodies: string[];
}

const STATUS_MARK = 'readme-test-status';
const BODY_MARK = 'readme-test-body';

/**
 * Runs a block in bash against `base`; curl fails on HTTP errors and reports each answer's status
 * and body (base64) on stderr (not in the output a block reads with `$(…)`). Resolves with the
 * output, the statuses and the bodies, rejects naming the heading.
 */
function runBlock(block: MarkedBlock, base: string, code = block.code): Promise<BlockRun> {
  const curl = [
    'curl() {',
    '  local body',
    `  body=$(command curl --fail-with-body --max-time 30 -w '%{stderr}${STATUS_MARK} %{http_code}\\n' "$@") || { local rc=$?; printf '%s' "$body"; return $rc; }`,
    `  printf '%s' "$body"; printf '${BODY_MARK} %s\\n' "$(printf '%s' "$body" | base64 -w0)" >&2`,
    '}',
  ].join('\n');
  const script = ['set -euo pipefail', curl, code.replaceAll('localhost:3000', base)].join('\n');
  return new Promise((resolve, reject) => {
    // Asynchronous: the service answers from this process.
    execFile('bash', ['-c', script], { timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err)
        reject(
          new Error(`${block.file}: block under "${block.heading}" failed (${err.message.split('\n')[0]}):\n${stderr}\n--- stdout:\n${stdout.slice(-4000)}`),
        );
      else
        resolve({
          stdout,
          statuses: [...stderr.matchAll(new RegExp(`^${STATUS_MARK} (\\d{3})$`, 'gm'))].map((m) => Number(m[1])),
          bodies: [...stderr.matchAll(new RegExp(`^${BODY_MARK} ([A-Za-z0-9+/=]*)$`, 'gm'))].map((m) => Buffer.from(m[1], 'base64').toString('utf8')),
        });
    });
  });
}

/** A curl call of a block that writes (any method but GET), with the status its `# → NNN` comment shows (null without one). */
interface ShownWrite {
  /** Index among the block's curl calls (in the order they run: the blocks have no loops or branches). */
  call: number;
  command: string;
  shown: number | null;
}

/** The writes of a block and the status each one's `# → NNN …` comment (the first comment line after it, before the next call) shows. */
function shownWrites(code: string): ShownWrite[] {
  const writes: ShownWrite[] = [];
  let call = -1;
  for (const line of code.split('\n')) {
    const comment = /^\s*#/.test(line);
    if (!comment && /\bcurl /.test(line)) {
      call++;
      const method = /-X ?(POST|PUT|PATCH|DELETE)\b/.exec(line)?.[1];
      if (method) writes.push({ call, command: line.trim(), shown: null });
    } else if (comment) {
      const last = writes[writes.length - 1];
      const status = /^\s*# → (\d{3})\b/.exec(line);
      if (last && last.call === call && last.shown === null && status) last.shown = Number(status[1]);
    }
  }
  return writes;
}

/** A recall call of a block whose `# → 200 {"items":[…]}` comment shows the event ids of its hits, in order. */
interface ShownRecall {
  /** Index among the block's curl calls. */
  call: number;
  command: string;
  eventIds: string[];
  /** Each hit's `"revision"` where the comment shows one (else undefined), in the same order. */
  revisions: Array<string | undefined>;
}

/** The calls of a block whose first `# →` comment line after them (before the next call) shows `"items":[…]` with `"eventId"`s. */
function shownRecalls(code: string): ShownRecall[] {
  const shown: ShownRecall[] = [];
  let call = -1;
  let commented = true;
  let command = '';
  for (const line of code.split('\n')) {
    if (!/^\s*#/.test(line) && /\bcurl /.test(line)) {
      call++;
      commented = false;
      command = line.trim();
    } else if (!commented && /^\s*# → /.test(line)) {
      commented = true;
      if (/"items":\[/.test(line)) {
        // a hit's members up to the next hit's `{`: its eventId, and its revision when shown
        const hits = [...line.matchAll(/"eventId":"([^"]+)"(?:[^{}]*?"revision":"(\d+)")?/g)];
        shown.push({ call, command, eventIds: hits.map((m) => m[1]), revisions: hits.map((m) => m[2]) });
      }
    }
  }
  return shown;
}

async function listen(harness: Harness): Promise<string> {
  await harness.service.app.listen(0, '127.0.0.1');
  const { port } = harness.service.app.getHttpServer().address() as AddressInfo;
  return `127.0.0.1:${port}`;
}

describe('README and docs examples, as pasted', () => {
  const blocks = documentedBlocks();
  const harnesses: Harness[] = [];

  afterAll(async () => {
    for (const h of harnesses) {
      await h.stop();
      fs.rmSync(h.dataDir, { recursive: true, force: true });
    }
  });

  it('marks the Try it block and the API keys block, and no marked block holds a <placeholder>', () => {
    // the Try it block shows the status of each of its writes: appends, compaction, policy, compaction by that policy, erasure
    const tryIt = blocks.find((b) => b.file === 'README.md' && b.heading === 'Try it')!;
    expect(shownWrites(tryIt.code).map((w) => [/\/(events|messages|compactions|policy)'?\s|-XDELETE/.exec(w.command)?.[0].trim(), w.shown])).toEqual([
      ['/events', 201],
      ['/messages', 201],
      ['/events', 201],
      ['/compactions', 200],
      ['/policy', 200],
      ['/compactions', 200],
      ['-XDELETE', 200],
    ]);
    // the recall examples whose hits it shows: the type filter narrows get_reservation (call and result) to the result
    expect(shownRecalls(tryIt.code).map((r) => [r.command, r.eventIds])).toEqual(
      expect.arrayContaining([["curl -s 'localhost:3000/v1/recall?q=get_reservation&userId=alice&type=tool'", ['t1']]]),
    );
    // README's one block to paste is Try it's; the API keys block is in the configuration reference
    expect(blocks.filter((b) => b.file === 'README.md').map((b) => [b.marker, b.heading])).toEqual([['run', 'Try it']]);
    expect(blocks.map((b) => [b.marker, b.file, b.heading])).toEqual(
      expect.arrayContaining([
        ['run', 'README.md', 'Try it'],
        ['run with API_KEYS', 'docs/configuration.md', 'API keys'],
      ]),
    );
    for (const b of blocks)
      expect({ heading: b.heading, placeholders: b.code.match(/<[a-zA-Z][^>\n]*>/g) }).toEqual({ heading: b.heading, placeholders: null });
    // `typecheck and run over NATS`: the first NATS example (test/e2e/nats-readme-example.e2e-spec.ts).
    expect(blocks.every((b) => ['run', 'run with API_KEYS', 'typecheck and run', 'typecheck and run over NATS'].includes(b.marker))).toBe(true);
  });

  it('runs every "run" block against a started service', async () => {
    const harness = await startService();
    harnesses.push(harness);
    const base = await listen(harness);
    const runs = blocks.filter((b) => b.marker === 'run');
    expect(runs.length).toBeGreaterThan(0);
    for (const block of runs) {
      const { statuses, bodies } = await runBlock(block, base);
      expect(bodies).toHaveLength(statuses.length);
      // every write shows the status it answers (`# → 201 …`), and answers it
      const writes = shownWrites(block.code);
      expect(writes.filter((w) => w.shown === null).map((w) => w.command)).toEqual([]);
      expect(writes.map((w) => [w.command, statuses[w.call]])).toEqual(writes.map((w) => [w.command, w.shown]));
      // every recall that shows its hits answers those events, in that order
      const recalls = shownRecalls(block.code);
      const items = (call: number) => (JSON.parse(bodies[call]) as { items: Array<{ eventId: string; revision: string }> }).items;
      expect(recalls.map((r) => [r.command, items(r.call).map((item) => item.eventId)])).toEqual(recalls.map((r) => [r.command, r.eventIds]));
      // and the revisions they show (newcomer ncfresh71 F1: the README showed t1 at revision 4, the service answers 3)
      expect(recalls.map((r) => [r.command, r.revisions.map((shown, i) => (shown === undefined ? undefined : items(r.call)[i]?.revision))])).toEqual(
        recalls.map((r) => [r.command, r.revisions]),
      );
    }
    // the Try it block did what it says: its session was written, compacted, then erased
    const log = await harness.service.store.headPosition();
    expect(log).toBeGreaterThan(10n);
  });

  it('starts with the API_KEYS docs/configuration.md shows, and runs the block with a key', async () => {
    const [block] = blocks.filter((b) => b.marker === 'run with API_KEYS');
    const keys = /API_KEYS='([^']+)' npm start/.exec(block.code)?.[1];
    expect(keys).toBeDefined();
    const harness = await startService({ env: { API_KEYS: keys! } });
    harnesses.push(harness);
    const base = await listen(harness);
    const rest = block.code
      .split('\n')
      .filter((line) => !/npm start/.test(line))
      .join('\n');
    await runBlock(block, base, rest);
    // and without a key the same route is refused: keys are really on
    await expect(runBlock(block, base, rest.replace(/ -H 'Authorization: [^']*'/g, ''))).rejects.toThrow(/unauthorized/);
  });

  // Issue 17 hardening: the typed-client example did not type-check (compactionId may be undefined)
  // and on a fresh session printed "3 undefined", then asked for /compactions/undefined/diff.
  it('type-checks the typed-client example, then runs it on a fresh session and on one that compacts', async () => {
    const [block] = blocks.filter((b) => b.marker === 'typecheck and run');
    expect(block).toBeDefined();
    const file = path.join(__dirname, `.readme-example-${process.pid}.ts`);
    // As pasted: docs/audit-page-and-client.md says to save the block as a file and run it with ts-node.
    const write = (code: string) => fs.writeFileSync(file, code);
    try {
      write(block.code);
      const config = ts.getParsedCommandLineOfConfigFile(
        path.join(__dirname, '..', '..', 'tsconfig.json'),
        {},
        { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
      );
      let parsed: ts.Program | undefined; // the second check reuses the first one's parsed files
      const diagnostics = (extra: ts.CompilerOptions = {}) => {
        parsed = ts.createProgram([file], { ...config!.options, noEmit: true, noUnusedLocals: false, ...extra }, undefined, parsed);
        return ts.getPreEmitDiagnostics(parsed).map((d) => `TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
      };
      expect(diagnostics()).toEqual([]);
      // and as an integrator's strict project checks it (ncsdk repro 11: apiKey: process.env.API_KEY and
      // minPosition: data.position were refused under exactOptionalPropertyTypes)
      expect(diagnostics(INTEGRATOR_STRICT_OPTIONS)).toEqual([]);

      const harness = await startService();
      harnesses.push(harness);
      const base = await listen(harness);
      const run = (code: string) =>
        new Promise<string>((resolve, reject) => {
          write(code.replaceAll('localhost:3000', base));
          execFile(
            process.execPath,
            ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', file],
            { cwd: path.join(__dirname, '..', '..'), timeout: 120_000 },
            (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)),
          );
        });
      // A fresh session: the compaction is a noop, so there is no compaction to diff.
      const fresh = await run(block.code);
      expect(fresh).toMatch(/^noop: window of \d+ tokens$/m);
      expect(fresh).not.toMatch(/undefined/);
      // A session long enough for the strategy to archive: the diff is fetched and printed.
      const long = block.code.replace('maxTokens: 4000', 'maxTokens: 5').replace("content: 'Hi'", "content: 'Hi'.repeat(50)");
      await harness
        .http()
        .post('/v1/sessions/demo2/events')
        .send({
          events: [1, 2, 3].flatMap((n) => [
            { id: `u${n}`, type: 'user', text: `question ${n} `.repeat(20) },
            { id: `a${n}`, type: 'assistant', text: `answer ${n} `.repeat(20) },
          ]),
        })
        .expect(201);
      const compacted = await run(long.replace("sessionId: 'demo'", "sessionId: 'demo2'"));
      expect(compacted).toMatch(/^compacted: window of \d+ tokens$/m);
      expect(compacted).toMatch(/^archived: \[/m);
      expect(compacted).not.toMatch(/undefined/);
    } finally {
      fs.rmSync(file, { force: true });
    }
  }, 180_000);

  it('every API_KEYS value the documentation shows is accepted at start-up', () => {
    const values = documentation().flatMap(({ text }) => [...text.matchAll(/API_KEYS='([^']+)'/g)].map((m) => m[1]));
    expect(values.length).toBeGreaterThanOrEqual(2);
    for (const value of values) expect(() => loadServiceConfig({ API_KEYS: value })).not.toThrow();
  });
});
