/**
 * `compactions_total` counts passes (DESIGN §3.6): an answer that replays a decision recorded
 * earlier (a concurrent duplicate, a redelivered command) is not a pass of its own. But its model
 * call was made: `summarizer_calls_total` and `summarizer_tokens_total` count every call, used or
 * discarded.
 */
import type { EventBus } from '@nestjs/cqrs';
import { parseStrategy } from '@lib/compaction';
import { SqliteEventStore } from '@lib/event-store';
import {
  AppendSessionEventsCommand,
  AppendSessionEventsHandler,
  CompactionAnswered,
  CompactSessionCommand,
  CompactSessionHandler,
  SessionStateCache,
  SummarizerCallsSpent,
  type Summarizer,
  type SummarizerOutcome,
} from '@lib/session';
import { CompactionMetricsHandler } from './compaction-metrics.handler';
import { ServiceMetrics } from './metrics';

/** Fails every call once `open()` is called (so two passes can be planned on the same revision first). */
class GatedFailingSummarizer implements Summarizer {
  readonly identity = { kind: 'extractive' as const, model: 'gated' };
  calls = 0;
  open: () => void = () => undefined;
  private readonly gate = new Promise<void>((resolve) => (this.open = resolve));
  async summarize(): Promise<SummarizerOutcome> {
    this.calls++;
    await this.gate;
    return { ok: false, reason: 'HTTP 500', failureKind: 'endpoint_error', calls: 1, promptTokens: 7, completionTokens: 0 };
  }
}

/** `compactions_total` samples as `origin/outcome/reason` → value. */
async function compactionCounts(metrics: ServiceMetrics): Promise<Record<string, number>> {
  const { values } = await metrics.compactions.get();
  return Object.fromEntries(values.map((v) => [`${v.labels.origin}/${v.labels.outcome}/${v.labels.reason}`, v.value]));
}

/** A counter's samples as `label/label/…` (in `names` order) → value. */
async function samples(counter: ServiceMetrics['summarizerCalls'] | ServiceMetrics['summarizerTokens'], names: string[]): Promise<Record<string, number>> {
  const { values } = await counter.get();
  return Object.fromEntries(values.map((v) => [names.map((n) => (v.labels as Record<string, string | number | undefined>)[n]).join('/'), v.value]));
}

describe('compactions_total', () => {
  it('counts a failed pass once, however many concurrent duplicates are answered with it; every model call counts in summarizer_calls_total', async () => {
    const store = SqliteEventStore.open(':memory:');
    try {
      const metrics = new ServiceMetrics();
      const counter = new CompactionMetricsHandler(metrics);
      const published: CompactionAnswered[] = [];
      const bus = {
        publish: (event: unknown) => {
          if (event instanceof SummarizerCallsSpent) counter.handle(event);
          if (!(event instanceof CompactionAnswered)) return;
          published.push(event);
          counter.handle(event);
        },
      } as unknown as EventBus;
      const append = new AppendSessionEventsHandler(store, new SessionStateCache(store), bus);
      for (let n = 0; n < 8; n++)
        await append.execute(new AppendSessionEventsCommand('t', 's', [{ event: { id: `u${n}`, type: 'user', text: `question ${n}` } }]));
      const summarizer = new GatedFailingSummarizer();
      const strategy = parseStrategy({ type: 'recursive-summarization', maxEventsToKeep: 3, overlapSize: 1 });
      // Three replicas (own caches) plan the same pass on the same revision.
      const passes = [0, 1, 2].map(() =>
        new CompactSessionHandler(store, new SessionStateCache(store), summarizer, bus).execute(
          new CompactSessionCommand('t', 's', strategy, null, 'chars', false),
        ),
      );
      while (summarizer.calls < 3) await new Promise((resolve) => setImmediate(resolve));
      summarizer.open();
      const answers = await Promise.all(passes);
      expect(answers.map((a) => a.outcome)).toEqual(['failed', 'failed', 'failed']);
      expect(answers.filter((a) => a.replayed)).toHaveLength(2);
      expect(published.map((e) => e.replayed).sort()).toEqual([false, true, true]);
      // a failed pass's reason label is its failureKind
      expect(await compactionCounts(metrics)).toEqual({ 'command/failed/endpoint_error': 1 });
      // three model calls: one recorded with the failure (reply "failed": no summary was written from it, ncsummarizer A4), two thrown away by the passes that found it
      expect(await samples(metrics.summarizerCalls, ['origin', 'outcome', 'reply'])).toEqual({ 'command/failed/failed': 1, 'command/failed/discarded': 2 });
      expect(await samples(metrics.summarizerTokens, ['reply', 'type'])).toEqual({
        'failed/prompt': 7,
        'failed/completion': 0,
        'discarded/prompt': 14,
        'discarded/completion': 0,
      });
    } finally {
      await store.close();
    }
  });

  it('counts a dry run apart, in compaction_dry_runs_total, never as a pass', async () => {
    const metrics = new ServiceMetrics();
    const counter = new CompactionMetricsHandler(metrics);
    counter.handle(new CompactionAnswered('command', 'compacted', undefined, true));
    counter.handle(new CompactionAnswered('command', 'noop', 'open-tool-call', true));
    counter.handle(new CompactionAnswered('command', 'compacted', undefined, false));
    expect(await compactionCounts(metrics)).toEqual({ 'command/compacted/': 1 });
    const { values } = await metrics.compactionDryRuns.get();
    expect(Object.fromEntries(values.map((v) => [`${v.labels.outcome}/${v.labels.reason}`, v.value]))).toEqual({ 'compacted/': 1, 'noop/open-tool-call': 1 });
  });
});
