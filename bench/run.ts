/**
 * Benchmark runner: `npm run bench` (full, < 10 min on 2 cores) or `npm run bench -- --quick`
 * (< 60 s). Prints the results table and writes `bench/results/<timestamp>.json` with the
 * machine and every figure. See bench/README.md for what each figure means.
 *
 * Ctrl-C (SIGINT) or SIGTERM stops it: its temporary data directories (all under one run
 * directory) are removed, one line says which figures were done, no results are written, exit
 * code 130 (143 on SIGTERM); a second one ends it at once. Figure 8's databases are dropped too.
 */
import 'reflect-metadata';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { parseScriptArgumentsOrExit } from '../apps/session-service/src/script-command-line';
import { interruptedExitCode, RunInterrupted, signalName, stopOnSignals, untilStopped } from '../apps/replay/src/stop-on-signals';
import { startBenchBuild } from './lib/compiled-service';
import { machineInfo, renderTable, runCost, type FigureResult } from './lib/report';
import { nowMs, round } from './lib/stats';
import { freshDir } from './lib/fresh-dir';

/** Sizes of a run. */
export interface BenchSizes {
  appendSeconds: number;
  baselineSeconds: number;
  clients: number;
  logSizes: number[];
  passesPerSize: number;
  recallEvents: number;
  recallQueries: number;
  tokenizerPasses: number;
  tokenizerEvery: number;
  plannerRepeats: number;
  plannerLiveSessions: number;
  memorySessions: number;
  memoryEventsPerSession: number;
  /** Figure 7: seconds the empty service idles before its second reading (0: none). */
  memoryIdleSeconds: number;
  /** Seconds of HTTP load per replica count (figure 8). */
  replicaSeconds: number;
  /** Replica counts of figure 8. */
  replicaCounts: number[];
  /** Seconds of each of figure 8's three store-side measures (raw `pg`, the adapter with 1 and with `clients` appenders). */
  replicaBaselineSeconds: number;
  /** Sessions and rounds (4 appends + 1 compact each) per transport (figure 9). */
  natsSessions: number;
  natsRounds: number;
  /** Figure 10: adversarial text lengths (UTF-16 code units). */
  adversarialSizes: number[];
}

/** `--quick`: every figure, small sizes, under 60 s. */
export const QUICK: BenchSizes = {
  appendSeconds: 2,
  baselineSeconds: 1,
  clients: 16,
  logSizes: [1_000, 10_000],
  passesPerSize: 5,
  recallEvents: 20_000,
  recallQueries: 300,
  tokenizerPasses: 1,
  tokenizerEvery: 10,
  plannerRepeats: 5,
  plannerLiveSessions: 8,
  memorySessions: 500,
  memoryEventsPerSession: 50,
  memoryIdleSeconds: 0,
  replicaSeconds: 2,
  replicaCounts: [1, 2],
  replicaBaselineSeconds: 1,
  natsSessions: 50,
  natsRounds: 1,
  adversarialSizes: [10_000, 100_000],
};

/** The full run of the issue's sizes. */
export const FULL: BenchSizes = {
  appendSeconds: 20,
  baselineSeconds: 8,
  clients: 16,
  logSizes: [1_000, 10_000, 100_000],
  passesPerSize: 15,
  recallEvents: 200_000,
  recallQueries: 2000,
  tokenizerPasses: 3,
  tokenizerEvery: 1,
  plannerRepeats: 20,
  plannerLiveSessions: 50,
  memorySessions: 10_000,
  memoryEventsPerSession: 50,
  memoryIdleSeconds: 30,
  replicaSeconds: 10,
  replicaCounts: [1, 2, 3],
  replicaBaselineSeconds: 8,
  natsSessions: 200,
  natsRounds: 2,
  adversarialSizes: [10_000, 100_000, 1_000_000],
};

const FIGURES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];

/**
 * `--only`'s value, comma-separated figure numbers (spaces around them allowed), as a set.
 * @throws InvalidArgumentError naming every item that is not a figure of {@link FIGURES} and listing the valid ones.
 */
function figureNumbers(value: string): Set<number> {
  const items = value.split(',').map((s) => s.trim());
  const unknown = items.filter((item) => !FIGURES.some((f) => String(f) === item));
  if (unknown.length > 0)
    throw new InvalidArgumentError(
      `No figure ${unknown.map((u) => JSON.stringify(u)).join(', ')}: use figure numbers ${FIGURES.join(', ')}, comma-separated (e.g. 1,3)`,
    );
  return new Set(items.map(Number));
}

/** The run's temporary directory: every figure's data directories are made under it; removed at the end, also when interrupted. */
let runDir: string | undefined;
/** Drops figure 8's databases still open, once the figures are loaded (called when interrupted). */
let dropDatabases: () => Promise<void> = async () => undefined;

async function main(): Promise<void> {
  const program = new Command()
    .name('bench')
    .description('Benchmarks of the session memory compaction service (see bench/README.md)')
    .option('--quick', 'small sizes, under 60 seconds', false)
    .option('--only <figures>', `comma-separated figure numbers to run (e.g. 1,3), of ${FIGURES.join(', ')} (default: all)`, figureNumbers)
    .option('--dir <path>', 'root of the temporary data directories (use a disk-backed one; default: the OS temp dir)')
    .option('--out <path>', 'directory of the JSON results', path.join(__dirname, 'results'))
    .allowExcessArguments(false);
  // A bad argument ends here (exit code 2, one line), before any directory is made or figure run.
  parseScriptArgumentsOrExit(program, process.argv.slice(2));
  const opts = program.opts<{ quick: boolean; only?: Set<number>; dir?: string; out: string }>();
  const sizes = opts.quick ? QUICK : FULL;
  const only = opts.only ?? new Set(FIGURES);
  const machine = machineInfo();
  const loadBefore = os.loadavg()[0];
  runDir = freshDir(opts.dir, 'run');
  const dir = runDir;
  // Ctrl-C stops waiting for the figure under way (figures take no signal); main's caller removes runDir and exits.
  const stop = stopOnSignals();
  const figuresDone: number[] = [];
  let doing = 'while loading the figures';
  const interruption = () =>
    new RunInterrupted(
      signalName(stop.signal),
      `${doing}; figures done: ${figuresDone.length > 0 ? figuresDone.join(', ') : 'none'}; temporary directories removed, no results written`,
    );
  process.stderr.write(`bench (${opts.quick ? 'quick' : 'full'}) on ${machine.cpuModel}, ${machine.cores} cores, Node ${machine.node}\n`);
  if (opts.quick) process.stderr.write(`${quickSizesLine()}\n`);
  // Figures 7 and 8 run the compiled service: its compiler starts now, in a child process, and runs
  // while ts-node loads the figures (seconds of CPU each, on two cores); the first figure waits for it.
  // A failed build is reported by figures 7 and 8 (they await the same promise); the others run.
  const build = only.has(7) || only.has(8) ? startBenchBuild().catch(() => undefined) : undefined;
  const buildStartedAt = process.uptime();
  const {
    runTokenizers,
    runAdversarialTokens,
    runPlannerVsLangChain,
    runAppendLoad,
    runCompactionScaling,
    runRecall,
    runPostgresReplicas,
    runNatsCommands,
    runMemory,
    dropOpenDatabases,
  } = await untilStopped(loadFigures(), stop.signal, interruption);
  dropDatabases = dropOpenDatabases;
  const loadedAt = process.uptime();
  if (build) {
    doing = 'while the service compiles';
    await untilStopped(build, stop.signal, interruption);
    const at = (seconds: number) => `${seconds.toFixed(1)}s`;
    process.stderr.write(
      `  … since node started: compiler started at ${at(buildStartedAt)}, figures loaded at ${at(loadedAt)}, compiler done at ${at(process.uptime())}\n`,
    );
  }

  const results: FigureResult[] = [];
  const started = nowMs();
  const run = async (figures: number[], title: string, fn: () => Promise<FigureResult | FigureResult[]>) => {
    if (!figures.some((f) => only.has(f))) return;
    process.stderr.write(`figure ${figures.join(' & ')}: ${title}\n`);
    doing = `during figure ${figures.join(' & ')} (${title})`;
    const t0 = nowMs();
    try {
      const out = await untilStopped(fn(), stop.signal, interruption);
      const list = Array.isArray(out) ? out : [out];
      for (const r of list) {
        r.seconds = round((nowMs() - t0) / 1000, 1);
        if (only.has(r.figure)) results.push(r);
        if (r.skipped) process.stderr.write(`  skipped figure ${r.figure}: ${r.skipped}\n`);
      }
    } catch (error) {
      if (error instanceof RunInterrupted) throw error;
      process.stderr.write(`  figure ${figures.join(' & ')} failed: ${(error as Error).stack ?? String(error)}\n`);
      for (const f of figures) if (only.has(f)) results.push({ figure: f, title, rows: [], skipped: `failed: ${(error as Error).message}` });
    }
    process.stderr.write(`  done in ${((nowMs() - t0) / 1000).toFixed(1)}s\n`);
    figuresDone.push(...figures.filter((f) => only.has(f)));
  };

  await run([5], 'tokenizer throughput', () => runTokenizers({ passes: sizes.tokenizerPasses, every: sizes.tokenizerEvery }));
  await run([10], 'adversarial token counting', () => runAdversarialTokens({ sizes: sizes.adversarialSizes }));
  await run([6], 'planner vs LangChain trimMessages', () =>
    runPlannerVsLangChain({ repeats: sizes.plannerRepeats, liveCounterSessions: sizes.plannerLiveSessions }),
  );
  await run([1, 3], 'append load over HTTP and projection lag', () =>
    runAppendLoad({ clients: sizes.clients, seconds: sizes.appendSeconds, baselineSeconds: sizes.baselineSeconds, dir }),
  );
  await run([2], 'compaction pass against log size', () => runCompactionScaling({ logSizes: sizes.logSizes, passes: sizes.passesPerSize, dir }));
  await run([4], 'recall latency', () => runRecall({ events: sizes.recallEvents, queries: sizes.recallQueries, dir }));
  await run([8], 'append throughput with 1–3 replicas on PostgreSQL', () =>
    runPostgresReplicas({
      clients: sizes.clients,
      seconds: sizes.replicaSeconds,
      baselineSeconds: sizes.replicaBaselineSeconds,
      replicaCounts: sizes.replicaCounts,
      dir,
    }),
  );
  await run([9], 'commands per second: NATS JetStream vs HTTP', () =>
    runNatsCommands({ sessions: sizes.natsSessions, rounds: sizes.natsRounds, clients: sizes.clients, dir }),
  );
  await run([7], 'resident memory', () =>
    runMemory({ sessions: sizes.memorySessions, eventsPerSession: sizes.memoryEventsPerSession, idleSeconds: sizes.memoryIdleSeconds, dir }),
  );

  stop.dispose();
  results.sort((a, b) => a.figure - b.figure);
  const totalSeconds = round((nowMs() - started) / 1000, 1);
  const table = renderTable(results);
  process.stdout.write(
    `\n${table}\n\nmachine: ${machine.cpuModel}, ${machine.cores} cores, ${machine.totalMemGiB} GiB, Node ${machine.node}, ${machine.platform}; ${machine.date}; ${opts.quick ? 'quick' : 'full'} run in ${totalSeconds}s\n`,
  );
  for (const r of results) for (const note of r.notes ?? []) process.stdout.write(`note ${r.figure}: ${note}\n`);

  fs.mkdirSync(opts.out, { recursive: true });
  const file = path.join(opts.out, `${machine.date.replace(/[:.]/g, '-')}${opts.quick ? '-quick' : ''}.json`);
  fs.writeFileSync(file, `${JSON.stringify({ mode: opts.quick ? 'quick' : 'full', machine, totalSeconds, sizes, table, figures: results }, null, 2)}\n`);
  process.stdout.write(`results: ${path.relative(process.cwd(), file)}\n`);
  if (opts.quick) process.stdout.write(`${quickSizesLine()}\n`);
  const cost = runCost();
  process.stdout.write(
    `total: ${cost.wallSeconds.toFixed(1)} s wall, ${cost.cpuSeconds === null ? 'CPU unknown (no /proc)' : `${cost.cpuSeconds.toFixed(1)} s CPU`} (user + system, the bench and its child processes; PostgreSQL's and NATS's own not counted), load average ${loadBefore.toFixed(1)} before, ${cost.loadAverage.toFixed(1)} after\n`,
  );
}

/** The figures' entry points, loaded after the compiler has started (see `main`). */
async function loadFigures() {
  const [appendLoad, compactionScaling, recall, tokenizers, planner, memory, replicas, nats, adversarial] = await Promise.all([
    import('./figures/append-load'),
    import('./figures/compaction-scaling'),
    import('./figures/recall'),
    import('./figures/tokenizers'),
    import('./figures/planner-vs-langchain'),
    import('./figures/memory'),
    import('./figures/postgres-replicas'),
    import('./figures/nats-commands'),
    import('./figures/adversarial-tokens'),
  ]);
  return {
    runAppendLoad: appendLoad.runAppendLoad,
    runCompactionScaling: compactionScaling.runCompactionScaling,
    runRecall: recall.runRecall,
    runTokenizers: tokenizers.runTokenizers,
    runPlannerVsLangChain: planner.runPlannerVsLangChain,
    runMemory: memory.runMemory,
    runPostgresReplicas: replicas.runPostgresReplicas,
    runNatsCommands: nats.runNatsCommands,
    runAdversarialTokens: adversarial.runAdversarialTokens,
    dropOpenDatabases: replicas.dropOpenDatabases,
  };
}

/** One line saying which sizes a quick run shrinks, against the full run's. */
function quickSizesLine(): string {
  const smaller = (Object.keys(QUICK) as (keyof BenchSizes)[])
    .filter((k) => JSON.stringify(QUICK[k]) !== JSON.stringify(FULL[k]))
    .map((k) => `${k} ${String(QUICK[k])} (full ${String(FULL[k])})`);
  return `quick run: smaller sizes than the full run, so the figures are rougher and not comparable with it: ${smaller.join('; ')}`;
}

main().then(
  () => {
    if (runDir) fs.rmSync(runDir, { recursive: true, force: true });
    process.exit(0);
  },
  async (error) => {
    if (runDir) fs.rmSync(runDir, { recursive: true, force: true });
    if (error instanceof RunInterrupted) {
      await dropDatabases();
      process.stderr.write(`bench: ${error.message}\n`);
      process.exit(interruptedExitCode(error.signal));
    }
    process.stderr.write(`${(error as Error).stack ?? error}\n`);
    process.exit(1);
  },
);
