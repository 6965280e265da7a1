/**
 * What a process's resident memory is made of, from Linux's `/proc/<pid>/status` and
 * `/proc/<pid>/smaps`, for figure 7: the anonymous part (heaps: V8's, glibc malloc's, SQLite's
 * page caches) against the file-backed part (the node binary, shared libraries, mapped files),
 * and how much of the anonymous part sits in glibc malloc's per-thread arenas.
 */
import * as fs from 'node:fs';

/** Resident memory of a process, in bytes; `null` fields when the kernel does not report them. */
export interface ProcessMemory {
  /** VmRSS: resident set. */
  rss: number;
  /** VmHWM: the highest VmRSS so far. */
  peak: number;
  /** RssAnon: resident anonymous memory (heaps, stacks). */
  anon: number | null;
  /** RssFile: resident file-backed memory (binary, libraries, mapped files). */
  file: number | null;
  /** Threads of the process. */
  threads: number | null;
  /**
   * glibc malloc's secondary arenas (one per thread that allocated, up to 8 per core unless
   * `MALLOC_ARENA_MAX`): each lives in 64 MiB-aligned reservations of 64 MiB ("heaps"), found
   * in `/proc/<pid>/smaps` as an anonymous read-write mapping at a 64 MiB boundary followed by
   * its inaccessible rest. `heaps` counts them, `rss` is their resident bytes; the main arena
   * (the brk heap) is not among them. `null` when smaps cannot be read.
   */
  arenaHeaps: { heaps: number; rss: number } | null;
  /** Resident bytes of the `[heap]` mapping: glibc malloc's main arena (the brk heap); `null` when smaps cannot be read. */
  brkHeap: number | null;
}

const HEAP_SIZE = 64 * 2 ** 20;

/** Reads {@link ProcessMemory} of `pid` (default: this process); `null` without `/proc`. */
export function processMemory(pid: number | 'self' = 'self'): ProcessMemory | null {
  let status: string;
  try {
    status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null;
  }
  const field = (name: string, unit = ' kB') => {
    const m = new RegExp(`^${name}:\\s+(\\d+)${unit}`, 'm').exec(status);
    return m ? Number(m[1]) * (unit ? 1024 : 1) : null;
  };
  return {
    rss: field('VmRSS') ?? NaN,
    peak: field('VmHWM') ?? NaN,
    anon: field('RssAnon'),
    file: field('RssFile'),
    threads: field('Threads', ''),
    ...mallocHeaps(pid),
  };
}

interface Mapping {
  start: number;
  end: number;
  perms: string;
  anonymous: boolean;
  brk: boolean;
  rss: number;
}

function mallocHeaps(pid: number | 'self'): Pick<ProcessMemory, 'arenaHeaps' | 'brkHeap'> {
  let smaps: string;
  try {
    smaps = fs.readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return { arenaHeaps: null, brkHeap: null };
  }
  const mappings: Mapping[] = [];
  for (const line of smaps.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ (\d+)\s*(.*)$/.exec(line);
    if (head) {
      mappings.push({
        start: parseInt(head[1], 16),
        end: parseInt(head[2], 16),
        perms: head[3],
        anonymous: head[4] === '0' && head[5] === '',
        brk: head[5] === '[heap]',
        rss: 0,
      });
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && mappings.length > 0) mappings[mappings.length - 1].rss = Number(rss[1]) * 1024;
  }
  let heaps = 0;
  let rss = 0;
  for (let i = 0; i < mappings.length; i++) {
    const m = mappings[i];
    if (!m.anonymous || !m.perms.startsWith('rw') || m.start % HEAP_SIZE !== 0) continue;
    // The heap's used part, then (unless it is full) its reserved rest, up to exactly 64 MiB.
    let end = m.end;
    let j = i + 1;
    while (j < mappings.length && mappings[j].start === end && mappings[j].anonymous && mappings[j].perms.startsWith('---') && end - m.start < HEAP_SIZE) {
      end = mappings[j].end;
      j++;
    }
    if (end - m.start !== HEAP_SIZE) continue;
    heaps++;
    rss += m.rss;
  }
  return { arenaHeaps: { heaps, rss }, brkHeap: mappings.filter((m) => m.brk).reduce((sum, m) => sum + m.rss, 0) };
}

/** One reading of figure 7's child (bench/figures/memory-child.ts), sent to the parent: memory of that process: `process.memoryUsage()`'s fields (bytes) and what `/proc` says of the resident set. */
export interface MemoryReading {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  proc: ProcessMemory | null;
  /** VmRSS right after the collection, before V8's background threads returned the freed pages (bytes). */
  rssAtCollection: number;
  /** ms waited after the collection for the resident set to settle. */
  settledAfterMs: number;
  /** The main thread's V8 heap spaces: committed (`size`) and used bytes of each, by name. */
  spaces: Record<string, { size: number; used: number }>;
}
