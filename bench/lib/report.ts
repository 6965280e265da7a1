/**
 * The shape of a benchmark figure's result, the machine description, the results table and the
 * progress lines printed while long steps run.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import { fmt } from './stats';

/** One row of the results table: a measured value, optionally against a baseline and a target. */
export interface FigureRow {
  /** Figure number from the issue (1–7). */
  figure: number;
  /** What is measured, e.g. `append throughput (events/s)`. */
  metric: string;
  /** The measured value (numbers are rounded for display only). */
  value: number | string;
  /** The same metric for the baseline, when there is one. */
  baseline?: number | string;
  /** Name of the baseline (e.g. `raw better-sqlite3`). */
  baselineName?: string;
  /** value / baseline (or the figure's own ratio), when meaningful. */
  ratio?: number;
  /** The issue's target in words, e.g. `≥ 1.0×`. */
  target?: string;
  /** Whether the target is met; undefined when there is no target (report only). */
  met?: boolean;
}

/** What a figure returns: its rows, free-form details for the JSON, and notes for the reader. */
export interface FigureResult {
  figure: number;
  title: string;
  rows: FigureRow[];
  details?: Record<string, unknown>;
  notes?: string[];
  /** Set when the figure was skipped (e.g. the shared data is absent), with the reason. */
  skipped?: string;
  /** Wall-clock seconds the figure took, filled in by the runner. */
  seconds?: number;
}

/** The machine a run happened on. */
export interface MachineInfo {
  cpuModel: string;
  cores: number;
  totalMemGiB: number;
  node: string;
  platform: string;
  date: string;
}

/** Describes this machine and the current time. */
export function machineInfo(): MachineInfo {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model?.trim() ?? 'unknown',
    cores: cpus.length,
    totalMemGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    date: new Date().toISOString(),
  };
}

/** Prints a progress line to stderr (kept off stdout so the table stays clean when piped). */
export function progress(message: string): void {
  process.stderr.write(`  … ${message}\n`);
}

/** Renders rows as a Markdown table (readable in a terminal and pasteable into docs/performance.md). */
export function renderTable(results: readonly FigureResult[]): string {
  const header = ['#', 'metric', 'value', 'baseline', 'ratio', 'target', 'met'];
  const lines: string[][] = [];
  for (const r of results) {
    if (r.skipped) {
      lines.push([String(r.figure), `${r.title}: skipped (${r.skipped})`, '', '', '', '', '']);
      continue;
    }
    for (const row of r.rows) {
      lines.push([
        String(row.figure),
        row.metric,
        fmt(row.value),
        row.baseline === undefined ? '' : `${fmt(row.baseline)}${row.baselineName ? ` (${row.baselineName})` : ''}`,
        row.ratio === undefined ? '' : `${fmt(row.ratio)}×`,
        row.target ?? '',
        row.met === undefined ? '' : row.met ? 'yes' : 'NO',
      ]);
    }
  }
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const render = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [render(header), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...lines.map(render)].join('\n');
}

/** What a run cost so far: wall and CPU seconds, and the load average it ran under. */
export interface RunCost {
  /** Wall-clock seconds since this process started (module loading included). */
  wallSeconds: number;
  /** CPU seconds (user + system) of this process (worker threads included) and of its child processes that have exited; null without /proc. */
  cpuSeconds: number | null;
  /** The 1-minute load average now. */
  loadAverage: number;
}

/**
 * {@link RunCost} of this process so far. Child processes count once they have exited (the
 * kernel adds them to `cutime`/`cstime` when they are reaped); servers the run only talks to
 * (PostgreSQL, NATS) do not count. On a shared machine the CPU seconds say more than the wall time.
 */
export function runCost(): RunCost {
  const own = process.cpuUsage();
  let children: number | null = null;
  try {
    const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    children = (Number(fields[13]) + Number(fields[14])) / 100; // cutime, cstime in clock ticks (USER_HZ = 100)
  } catch {
    // no /proc: own CPU only is not the whole cost, so report none
  }
  return {
    wallSeconds: process.uptime(),
    cpuSeconds: children === null ? null : (own.user + own.system) / 1e6 + children,
    loadAverage: os.loadavg()[0],
  };
}
