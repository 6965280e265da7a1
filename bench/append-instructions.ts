/**
 * Instructions per whole append, counted by `valgrind --tool=callgrind`: a measure that does not
 * move with what else the machine runs (CPU time and events/s on the shared 2-core machine move 2×
 * between minutes), for telling two builds apart by a few percent (docs/performance.md, issue 14).
 *
 *   npx ts-node --transpile-only -r tsconfig-paths/register bench/append-instructions.ts [options]
 *
 * It compiles the bench build (`tsconfig.bench-build.json`, as figures 7 and 8 do), then runs
 * `bench/lib/append-instructions-child.ts` under callgrind with instrumentation off
 * (`--instr-atstart=no`): the child starts the service in-process (or the ceiling, figure 1's
 * minimal Fastify + better-sqlite3 server), sends `--warm` one-event appends through
 * `fastify.inject`, 16 in flight on 16 sessions (as `bench/append-cpu.ts` does), then waits; the
 * driver turns instrumentation on (`callgrind_control -i on`), the child sends `--n` appends, the
 * driver turns it off. Node runs with `--perf-basic-prof` (V8 writes `/tmp/perf-<pid>.map`: every
 * JIT-compiled function's address range and name) and `--interpreted-frames-native-stack`, so the
 * addresses callgrind names JIT code by are resolved to JavaScript functions and their files.
 *
 * Printed per append: instructions of all threads, of the event loop, of the store's writer thread
 * and of the others (V8's compiler and GC helpers); then the event loop's instructions by
 * component. A component is where the code lives (zod, Nest, `@nestjs/cqrs`, pino, prom-client,
 * Fastify, body-parser, token counting, the projector, the event store, the write side, Node's
 * internals, …): each instruction of a JavaScript function is charged to that function's
 * component, and each instruction of native code (V8's builtins and runtime, SQLite, libc, libuv)
 * to the JavaScript functions that called it, split by the call arcs' inclusive costs, except
 * garbage collection and V8's compilers, which are their own rows. Inclusive costs of async code
 * are not used: an `await` ends a call, so the work after it is charged to whatever resumes it.
 * Last, the event loop's 25 costliest JavaScript functions (for finding what to cut) and, when the
 * ceiling was measured, the ratio.
 *
 * Options: `--n <appends>` (default 400), `--warm <appends>` (default 2,000), `--only
 * service|ceiling` (default both), `--build <checkout>` (measure the service of another checkout:
 * its `tsconfig.bench-build.json` is compiled there; the child and the ceiling are this one's),
 * `--keep <dir>` (keep the callgrind files and the perf map there, for `callgrind_annotate`),
 * `--top <k>` (functions listed, default 25), `--node-flag <flag>` (repeatable: a flag for the measured Node
 * process, e.g. `--predictable`). Environment: as the service reads it (`LOG_LEVEL`
 * defaults to `silent`, as figure 1 runs it). Under callgrind a run of the service takes about 2–3
 * minutes of CPU at the defaults, the ceiling about 1.
 */
import { spawn, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { corpus, textMessages } from './lib/corpus';
import { BENCH_BUILD_DIR, startBenchBuild } from './lib/compiled-service';

interface Options {
  n: number;
  warm: number;
  only?: 'service' | 'ceiling';
  build?: string;
  keep?: string;
  top: number;
  /** Re-read the files a `--keep` run left in this directory instead of running. */
  from?: string;
  /** Also print every event-loop function whose name matches (per append). */
  grep?: RegExp;
  /** Extra flags for the measured Node process (`--node-flag`, repeatable), e.g. `--predictable`. */
  nodeFlags: string[];
}

function parseOptions(argv: readonly string[]): Options {
  const options: Options = { n: 400, warm: 2000, top: 25, nodeFlags: [] };
  for (let i = 0; i < argv.length; i++) {
    const value = argv[i + 1];
    switch (argv[i]) {
      case '--n':
        options.n = Number(value);
        break;
      case '--warm':
        options.warm = Number(value);
        break;
      case '--only':
        if (value !== 'service' && value !== 'ceiling') throw new Error('--only service|ceiling');
        options.only = value;
        break;
      case '--build':
        options.build = path.resolve(value);
        break;
      case '--keep':
        options.keep = path.resolve(value);
        break;
      case '--top':
        options.top = Number(value);
        break;
      case '--from':
        options.from = path.resolve(value);
        break;
      case '--grep':
        options.grep = new RegExp(value);
        break;
      case '--node-flag':
        options.nodeFlags.push(value);
        break;
      default:
        throw new Error(`unknown option ${argv[i]}`);
    }
    i += 1;
  }
  return options;
}

/** One function of a callgrind profile: its own instructions and the calls it made. */
interface FnNode {
  name: string;
  self: number;
  /** Callee name → inclusive instructions of the calls. */
  calls: Map<string, number>;
}

/**
 * Reads a callgrind output file (format version 1, one event `Ir`, name compression) into its
 * functions. A recursion depth suffix (`'2`) is dropped, so depths merge into one function.
 */
export function parseCallgrind(text: string): Map<string, FnNode> {
  const fns = new Map<string, FnNode>();
  const names = new Map<string, string>();
  const resolve = (spec: string): string => {
    const m = /^\((\d+)\)(?: (.*))?$/.exec(spec);
    let name = spec;
    if (m) {
      if (m[2] !== undefined) names.set(m[1], m[2]);
      name = names.get(m[1]) ?? spec;
    }
    return name.replace(/'\d+$/, '');
  };
  const node = (name: string): FnNode => {
    let f = fns.get(name);
    if (!f) fns.set(name, (f = { name, self: 0, calls: new Map() }));
    return f;
  };
  let current: FnNode | undefined;
  let callee: string | undefined;
  let inCall = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('fn=')) {
      current = node(resolve(line.slice(3)));
    } else if (line.startsWith('cfn=')) {
      callee = resolve(line.slice(4));
    } else if (line.startsWith('calls=')) {
      inCall = true;
    } else if (/^[0-9+\-*]/.test(line) && current) {
      const parts = line.trim().split(/\s+/);
      const cost = parts.length > 1 ? Number(parts[parts.length - 1]) : 0;
      if (inCall && callee !== undefined) {
        if (callee !== current.name) current.calls.set(callee, (current.calls.get(callee) ?? 0) + cost);
        inCall = false;
      } else {
        current.self += cost;
      }
    }
  }
  return fns;
}

/** V8's perf map: JIT code ranges and their names (later entries win where code was reused). */
export class PerfMap {
  private readonly starts: number[] = [];
  private readonly entries: Array<{ start: number; end: number; name: string }> = [];

  constructor(text: string) {
    const byStart = new Map<number, { start: number; end: number; name: string }>();
    for (const line of text.split('\n')) {
      const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
      if (!m) continue;
      const start = parseInt(m[1], 16);
      byStart.set(start, { start, end: start + parseInt(m[2], 16), name: m[3] });
    }
    this.entries = [...byStart.values()].sort((a, b) => a.start - b.start);
    this.starts = this.entries.map((e) => e.start);
  }

  /** The name of the code holding `address`, or undefined. */
  lookup(address: number): string | undefined {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.starts[mid] <= address) lo = mid + 1;
      else hi = mid - 1;
    }
    const e = this.entries[hi];
    return e && address < e.end ? e.name : undefined;
  }
}

/** Component rules for a JavaScript function, by its file (first match wins). */
const COMPONENTS: Array<[RegExp, string]> = [
  [/node_modules\/zod\//, 'validation: zod'],
  [/node_modules\/(@nestjs\/cqrs|rxjs)\//, '@nestjs/cqrs buses and rxjs'],
  [/node_modules\/@nestjs\//, 'Nest pipeline (core, common, platform-fastify)'],
  [
    /node_modules\/(pino|pino-http|nestjs-pino|pino-std-serializers|sonic-boom|thread-stream|fast-redact|@pinojs|on-exit-leak-free)\//,
    'logging: pino, pino-http, nestjs-pino',
  ],
  [/node_modules\/(prom-client|tdigest|bintrees)\//, 'metrics: prom-client'],
  [/node_modules\/light-my-request\//, 'inject (the harness, not in production)'],
  [
    /node_modules\/(fastify|find-my-way|avvio|@fastify\/[^/]+|fast-json-stringify|secure-json-parse|toad-cache|fastq|process-warning|abstract-logging|rfdc|fast-querystring|fast-decode-uri-component|ret|safe-regex2|middie)\//,
    'Fastify (routing, hooks, reply, middie)',
  ],
  [
    /node_modules\/(body-parser|raw-body|iconv-lite|bytes|content-type|type-is|media-typer|mime-types|mime-db|http-errors|on-finished|ee-first|destroy|unpipe|debug|ms|qs|depd|statuses)\//,
    'JSON body: body-parser, raw-body',
  ],
  [/node_modules\/gpt-tokenizer\/|libs\/compaction\/src\/(bpe-token-counter|token-estimators)|libs\/session\/src\/token-counting\//, 'token counting'],
  [/node_modules\/better-sqlite3\//, 'better-sqlite3 JS (transaction wrapper: BEGIN/COMMIT)'],
  [/node_modules\/piscina\//, 'piscina (worker pools)'],
  [/libs\/session\/src\/read-side\//, 'projector and read models (JS + its SQLite)'],
  [/libs\/event-store\/src\//, 'event store: hand-off to the writer, ids, group commit (JS + SQLite reads)'],
  [/libs\/session\/src\/(write-side|decider|domain|events|queries)\//, 'write side: handler, load, decide, evolve'],
  [/libs\/compaction\/src\//, 'compaction lib (event checks, classify, text)'],
  [/libs\/session\/src\//, 'session lib, other'],
  [/apps\/session-service\/src\/observability\//, 'our hooks: request id, metrics, logging'],
  [/apps\/session-service\/src\/(http|commands)\//, 'our HTTP layer: controllers, body → command, guards, filters'],
  [/apps\/session-service\/src\//, 'service, other'],
  [/bench\//, 'the harness (payloads, loop)'],
  [/^\w+:\S* :\d+:\d+$/, "generated code (`new Function`: zod's compiled parsers, …)"],
  [/node:internal\/(async_hooks|async_local_storage)|node:async_hooks/, 'Node: async hooks, AsyncLocalStorage'],
  [/node:internal\/streams|node:stream|node:internal\/webstreams/, 'Node: streams'],
  [/node:events|node:internal\/events/, 'Node: EventEmitter'],
  [/node:internal\/process\/task_queues|node:internal\/timers|node:timers/, 'Node: ticks, microtasks, timers'],
  [/node:internal\/worker|node:worker_threads|node:internal\/per_context\/messageport/, 'Node: worker messages'],
  [/node:/, 'Node: other internals'],
  [/node_modules\/([^/]+)\//, 'other packages'],
];

function componentOfJs(name: string): string {
  for (const [pattern, component] of COMPONENTS) if (pattern.test(name)) return component;
  return /\s\S+:\d+:\d+$/.test(name) ? 'other JS' : `V8 builtins without a JavaScript caller`;
}

/** Native code charged to its own row instead of its JavaScript callers. */
function ownNativeRow(name: string): string | undefined {
  if (
    /v8::internal::(Heap|Scavenger|MarkCompact|MinorMarkCompact|Sweeper|ConcurrentMarking|IncrementalMarking|MemoryAllocator|ScavengeJob|GCTracer|MarkingVisitor|MainMarkingVisitor|Evacuat|ArrayBufferSweeper|PagedSpace|NewSpace|SemiSpace|LocalHeap|GlobalHandles|RememberedSet|Marking|WeakObjects|.*Mark)/.test(
      name,
    )
  ) {
    return 'garbage collection';
  }
  if (/v8::internal::(compiler|maglev|baseline|Compiler|OptimizingCompileDispatcher|Parser|Scanner|interpreter::BytecodeGenerator|AstNode|wasm)/.test(name)) {
    return "V8's compilers";
  }
  return undefined;
}

interface ThreadReport {
  total: number;
  components: Map<string, number>;
  functions: Map<string, number>;
}

/**
 * Charges one thread's instructions to components: a JavaScript function's own instructions to
 * its component; native code's to its callers in proportion to the calls' inclusive costs, up to
 * the nearest JavaScript function (garbage collection and V8's compilers keep their own rows, and
 * native code they call is charged to those rows when its share reaches one of their frames;
 * native code that no JavaScript called, such as libuv's loop, is "native, no JavaScript caller").
 */
export function chargeThread(fns: Map<string, FnNode>, perfMap: PerfMap): ThreadReport {
  const jsName = new Map<string, string>();
  for (const name of fns.keys()) {
    const m = /^0x([0-9a-f]+)$/.exec(name);
    const mapped = m ? perfMap.lookup(parseInt(m[1], 16)) : undefined;
    if (mapped && /^(JS|LazyCompile|Function|Eval|Script):/.test(mapped)) jsName.set(name, mapped.replace(/^(\w+):[*~^+-]?/, '$1:'));
  }
  const callers = new Map<string, Array<[string, number]>>();
  for (const f of fns.values()) {
    for (const [callee, cost] of f.calls) {
      let list = callers.get(callee);
      if (!list) callers.set(callee, (list = []));
      list.push([f.name, cost]);
    }
  }
  const components = new Map<string, number>();
  const functions = new Map<string, number>();
  const add = <K>(m: Map<K, number>, k: K, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  let pending = new Map<string, number>();
  let total = 0;
  for (const f of fns.values()) {
    total += f.self;
    if (f.self === 0) continue;
    const js = jsName.get(f.name);
    if (js !== undefined) {
      add(functions, js, f.self);
      add(components, componentOfJs(js), f.self);
    } else {
      const own = ownNativeRow(f.name);
      if (own) add(components, own, f.self);
      else add(pending, f.name, f.self);
    }
  }
  for (let pass = 0; pass < 60 && pending.size > 0; pass++) {
    const next = new Map<string, number>();
    for (const [name, cost] of pending) {
      const up = callers.get(name)?.filter(([c]) => c !== name) ?? [];
      const weight = up.reduce((s, [, w]) => s + w, 0);
      if (up.length === 0 || weight === 0) {
        add(components, 'native, no JavaScript caller (libuv loop, V8 entry)', cost);
        continue;
      }
      for (const [caller, w] of up) {
        const share = (cost * w) / weight;
        const js = jsName.get(caller);
        const own = js === undefined ? ownNativeRow(caller) : undefined;
        if (js !== undefined) {
          add(functions, js, share);
          add(components, componentOfJs(js), share);
        } else if (own) add(components, own, share);
        else add(next, caller, share);
      }
    }
    pending = next;
  }
  for (const cost of pending.values()) add(components, 'native, call cycles not resolved', cost);
  return { total, components, functions };
}

interface RunResult {
  threads: Array<{ id: string; report: ThreadReport; label: string }>;
  n: number;
}

/** The label of a thread from its costliest functions. */
function threadLabel(report: ThreadReport, index: number): string {
  if (index === 0) return 'event loop';
  const top = [...report.components.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? '';
  if (/event store/.test(top)) return 'store writer thread';
  if (/garbage/.test(top)) return 'V8 GC helper';
  if (/compilers/.test(top)) return 'V8 compiler thread';
  return `other (${top})`;
}

async function runUnderCallgrind(mode: 'service' | 'ceiling', options: Options, textsFile: string, outDir: string): Promise<RunResult> {
  const child = path.join(BENCH_BUILD_DIR, 'bench', 'lib', 'append-instructions-child.js');
  const out = path.join(outDir, `${mode}.callgrind`);
  const args = [
    '--tool=callgrind',
    '--instr-atstart=no',
    '--separate-threads=yes',
    '--separate-recs=1',
    '--smc-check=all-non-file',
    `--callgrind-out-file=${out}`,
    process.execPath,
    // V8 without helper threads: compilation and garbage collection run on the event loop, where they are
    // counted as their own rows, in the same order every run (with concurrent compilers and markers the
    // count moved ±15% between runs of one build: what ran in the window depended on thread scheduling).
    '--single-threaded',
    // Code that moves (code-space compaction) or is flushed and compiled again would leave the perf map naming an
    // address after the wrong function; the map is also read only up to the end of the measured appends.
    '--no-compact-code-space',
    '--no-flush-bytecode',
    '--perf-basic-prof',
    '--interpreted-frames-native-stack',
    ...options.nodeFlags,
    '-r',
    require.resolve('tsconfig-paths/register'),
    child,
    mode,
  ];
  const build = options.build ? path.join(options.build, '.tmp', 'bench-build') : BENCH_BUILD_DIR;
  const proc = spawn('valgrind', args, {
    cwd: outDir,
    env: {
      LOG_LEVEL: 'silent',
      ...process.env,
      TS_NODE_BASEURL: build,
      TS_NODE_PROJECT: path.join(options.build ?? path.join(BENCH_BUILD_DIR, '..', '..'), 'tsconfig.json'),
      APPEND_INSTRUCTIONS_BUILD: build,
      APPEND_INSTRUCTIONS_TEXTS: textsFile,
      APPEND_INSTRUCTIONS_N: String(options.n),
      APPEND_INSTRUCTIONS_WARM: String(options.warm),
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const control = (what: 'on' | 'off') => {
    const said = execFileSync('callgrind_control', ['-i', what, String(proc.pid)], { encoding: 'utf8' });
    if (!/OK/.test(said)) throw new Error(`callgrind_control -i ${what}: ${said}`);
  };
  const started = Date.now();
  let mapBytes = 0;
  for await (const line of readline.createInterface({ input: proc.stdout })) {
    if (line === 'READY') {
      process.stderr.write(`  ${mode}: warmed up (${options.warm} appends) in ${((Date.now() - started) / 1000).toFixed(0)} s; measuring ${options.n}\n`);
      control('on');
      proc.stdin.write('go\n');
    } else if (line.startsWith('DONE')) {
      control('off');
      mapBytes = fs.statSync(`/tmp/perf-${proc.pid}.map`).size;
      proc.stdin.write('stop\n');
    }
  }
  const code = await exited;
  if (code !== 0) fs.rmSync(`/tmp/perf-${proc.pid}.map`, { force: true });
  if (code !== 0) throw new Error(`${mode} under callgrind exited with ${code}:\n${stderr.slice(-3000)}`);
  const mapFile = `/tmp/perf-${proc.pid}.map`;
  fs.writeFileSync(path.join(outDir, `${mode}.perf.map`), fs.readFileSync(mapFile).subarray(0, mapBytes));
  fs.rmSync(mapFile, { force: true });
  fs.writeFileSync(path.join(outDir, `${mode}.n`), String(options.n));
  process.stderr.write(`  ${mode}: done in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  return analyse(mode, outDir);
}

/** The per-thread reports of a run whose callgrind files, perf map and count are in `outDir`. */
function analyse(mode: 'service' | 'ceiling', outDir: string): RunResult {
  const perfMap = new PerfMap(fs.readFileSync(path.join(outDir, `${mode}.perf.map`), 'utf8'));
  const files = fs
    .readdirSync(outDir)
    .filter((f) => f.startsWith(`${mode}.callgrind-`))
    .sort();
  const threads = files.map((f, index) => {
    const report = chargeThread(parseCallgrind(fs.readFileSync(path.join(outDir, f), 'utf8')), perfMap);
    return { id: f.slice(f.lastIndexOf('-') + 1), report, label: threadLabel(report, index) };
  });
  const total = threads.reduce((s, t) => s + t.report.total, 0);
  if (total === 0) throw new Error(`${mode}: callgrind counted nothing (was instrumentation turned on?)`);
  return { threads: threads.filter((t) => t.report.total > 0), n: Number(fs.readFileSync(path.join(outDir, `${mode}.n`), 'utf8')) };
}

const fmt = (x: number) => Math.round(x).toLocaleString('en-US');

function printRun(mode: string, result: RunResult, top: number, grep?: RegExp): { all: number; loop: number; work: number } {
  const per = (x: number) => x / result.n;
  const all = result.threads.reduce((s, t) => s + t.report.total, 0);
  const loop = result.threads[0].report.total;
  const components = result.threads[0].report.components;
  const work = loop - (components.get('garbage collection') ?? 0) - (components.get("V8's compilers") ?? 0);
  const lines = [
    `\n## ${mode}: ${fmt(per(all))} instructions per append (all threads), event loop ${fmt(per(loop))}, event loop without garbage collection and compilers ${fmt(per(work))}`,
    '',
  ];
  lines.push('| thread | instructions per append |', '| --- | --- |');
  for (const t of result.threads) lines.push(`| ${t.label} (${t.id}) | ${fmt(per(t.report.total))} |`);
  lines.push('', `Event loop by component (${fmt(per(loop))} per append):`, '', '| component | per append | % |', '| --- | --- | --- |');
  for (const [c, v] of [...result.threads[0].report.components.entries()].sort((a, b) => b[1] - a[1])) {
    if (v / loop < 0.001) continue;
    lines.push(`| ${c} | ${fmt(per(v))} | ${((100 * v) / loop).toFixed(1)} |`);
  }
  lines.push(
    '',
    `Event loop, costliest JavaScript functions (own instructions and their native callees):`,
    '',
    '| function | per append | % |',
    '| --- | --- | --- |',
  );
  for (const [f, v] of [...result.threads[0].report.functions.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    lines.push(
      `| \`${f.replace(/\/.*node_modules\//, 'node_modules/').replace(/\/work\/[^ ]*?\/(apps|libs|bench)\//, '$1/')}\` | ${fmt(per(v))} | ${((100 * v) / loop).toFixed(1)} |`,
    );
  }
  if (grep) {
    lines.push('', `Event loop functions matching ${grep}:`, '');
    for (const [f, v] of [...result.threads[0].report.functions.entries()].filter(([f]) => grep.test(f)).sort((a, b) => b[1] - a[1])) {
      lines.push(`- \`${f}\`: ${fmt(per(v))}`);
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  return { all: per(all), loop: per(loop), work: per(work) };
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  if (options.from) {
    for (const mode of ['service', 'ceiling'] as const) {
      if (fs.existsSync(path.join(options.from, `${mode}.n`))) printRun(mode, analyse(mode, options.from), options.top, options.grep);
    }
    return;
  }
  await startBenchBuild();
  if (options.build) {
    execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-b', path.join(options.build, 'tsconfig.bench-build.json')], {
      cwd: options.build,
      stdio: 'inherit',
    });
    const ui = path.join(options.build, '.tmp', 'bench-build', 'apps', 'session-service', 'ui');
    if (!fs.existsSync(ui)) fs.symlinkSync(path.join(options.build, 'apps', 'session-service', 'ui'), ui, 'dir');
  }
  const outDir = options.keep ?? fs.mkdtempSync(path.join(os.tmpdir(), 'append-instructions-'));
  fs.mkdirSync(outDir, { recursive: true });
  const textsFile = path.join(outDir, 'texts.json');
  fs.writeFileSync(textsFile, JSON.stringify(textMessages(corpus().conversations).slice(0, 2000)));
  const load = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  process.stdout.write(
    `# Instructions per append (callgrind), ${new Date().toISOString()}, ${options.n} appends after ${options.warm}, service ${options.build ?? path.join(BENCH_BUILD_DIR, '..', '..')}${options.nodeFlags.length ? `, node ${options.nodeFlags.join(' ')}` : ''}, load ${load()}\n`,
  );
  try {
    const figures: Record<string, { all: number; loop: number; work: number }> = {};
    for (const mode of ['service', 'ceiling'] as const) {
      if (options.only && options.only !== mode) continue;
      process.stderr.write(`${mode} under callgrind…\n`);
      figures[mode] = printRun(mode, await runUnderCallgrind(mode, options, textsFile, outDir), options.top, options.grep);
    }
    if (figures.service && figures.ceiling) {
      process.stdout.write(
        `\nService / ceiling: ${(figures.service.all / figures.ceiling.all).toFixed(2)}× all threads, ${(figures.service.loop / figures.ceiling.loop).toFixed(2)}× event loop, ${(figures.service.work / figures.ceiling.work).toFixed(2)}× event loop without garbage collection and compilers (ceiling / service: ${(figures.ceiling.work / figures.service.work).toFixed(3)})\n`,
      );
    }
  } finally {
    if (!options.keep) fs.rmSync(outDir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
