import { AutoCompactionBackoff, autoCompactionBackoffMs, MAX_AUTO_COMPACTION_BACKOFF_MS } from './auto-compaction-backoff';

const settings = { autoCompactionMaxFailures: 3, autoCompactionBackoffMs: 30_000 };

describe('auto-compaction backoff', () => {
  it('waits AUTO_COMPACTION_BACKOFF_MS × 2^(failures − max) after the last failure, at most one hour, nothing below max', () => {
    expect([0, 2, 3, 4, 5, 10, 1_000].map((f) => autoCompactionBackoffMs(settings, f))).toEqual([
      0,
      0,
      30_000,
      60_000,
      120_000,
      MAX_AUTO_COMPACTION_BACKOFF_MS,
      MAX_AUTO_COMPACTION_BACKOFF_MS,
    ]);
  });

  function backoffAt(start: number) {
    const clock = { now: start };
    const lines: string[] = [];
    const backoff = new AutoCompactionBackoff(settings, { warn: (l) => lines.push(`warn ${l}`), log: (l) => lines.push(`log ${l}`) }, () => clock.now);
    return { clock, lines, backoff };
  }

  it('enters at the failure that reaches max (one warn line), waits from the last failure, leaves when a pass compacts (one line)', () => {
    const { clock, lines, backoff } = backoffAt(Date.parse('2026-01-01T00:00:00Z'));
    backoff.passed('k', 't', 's', 'failed', 2);
    expect(backoff.size).toBe(0);
    backoff.passed('k', 't', 's', 'failed', 3);
    expect(backoff.size).toBe(1);
    expect(lines).toEqual([
      'warn auto-compaction of session "s" (tenant "t") backs off after 3 failed compactions in a row: next automatic attempt at the first append after 2026-01-01T00:00:30.000Z (30000 ms after the last failure, doubling with each further failure up to 1 h)',
    ]);
    clock.now += 29_999;
    expect(backoff.mayRun('k', 't', 's', 3)).toBe(false);
    clock.now += 1;
    expect(backoff.mayRun('k', 't', 's', 3)).toBe(true);
    backoff.passed('k', 't', 's', 'failed', 4);
    clock.now += 59_999;
    expect(backoff.mayRun('k', 't', 's', 4)).toBe(false);
    clock.now += 1;
    expect(backoff.mayRun('k', 't', 's', 4)).toBe(true);
    backoff.passed('k', 't', 's', 'compacted', 0);
    expect(backoff.size).toBe(0);
    expect(lines.slice(1)).toEqual(['log auto-compaction of session "s" (tenant "t") leaves backoff after 90 s: compacted']);
  });

  it('after a restart (no failure time in this process) a session over max waits a full backoff from the first append that finds it', () => {
    const { clock, lines, backoff } = backoffAt(0);
    expect(backoff.mayRun('k', 't', 's', 4)).toBe(false);
    expect(lines).toHaveLength(1);
    clock.now = 59_999;
    expect(backoff.mayRun('k', 't', 's', 4)).toBe(false);
    clock.now = 60_000;
    expect(backoff.mayRun('k', 't', 's', 4)).toBe(true);
    // A commanded pass compacted meanwhile: the log's count is back under max.
    expect(backoff.mayRun('k', 't', 's', 0)).toBe(true);
    expect(backoff.size).toBe(0);
    expect(lines[1]).toBe('log auto-compaction of session "s" (tenant "t") leaves backoff after 60 s: a compaction succeeded');
  });
});
