/**
 * Two replicas (in-process services) on one throwaway PostgreSQL database, or one SQLite store
 * file (`SQLITE_EVENTS_FILE`), each with its own slow
 * counting model, for the specs of the automatic-compaction claim
 * (`test/e2e/replicas-auto-*.e2e-spec.ts`).
 */
import type { SummaryRequest } from '@lib/compaction';
import { AutoCompactionScheduler, type Summarizer, type SummarizerOutcome } from '@lib/session';
import { usePostgresReplicas } from './postgres-replicas';
import { useSqliteReplicas } from './sqlite-replicas';
import type { Harness } from './service-harness';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `n` distinct words (about `n` × 3 tokens in cl100k_base: repeated letters would cost almost nothing). */
export const words = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}w${i}`).join(' ');

/** A model that answers after `delayMs` (milliseconds) and counts its calls; a call made while `failing` fails. */
export class SlowCountingSummarizer implements Summarizer {
  readonly identity = { kind: 'openai-compatible' as const, model: 'test-slow' }; // a model endpoint's stand-in: its calls count in a session's spend
  calls = 0;
  failing = false;
  constructor(private readonly delayMs: number) {}
  async summarize(request: SummaryRequest): Promise<SummarizerOutcome> {
    this.calls++;
    const failing = this.failing;
    await sleep(this.delayMs);
    if (failing) return { ok: false, reason: 'model endpoint error: HTTP 500', calls: 1, promptTokens: 0, completionTokens: 0 };
    return { ok: true, text: `summary of ${request.coveredIds.length} events`, calls: 1, promptTokens: 10, completionTokens: 5 };
  }
}

/** The replicas of {@link useAutoClaimReplicas}: `a` and `b` are set once `beforeAll` has run. */
export interface AutoClaimReplicas {
  a: Harness;
  b: Harness;
  modelA: SlowCountingSummarizer;
  modelB: SlowCountingSummarizer;
  /** Resolves once both replicas' automatic passes are idle together (a replica waiting for the other's claim runs when it is released). */
  idle: () => Promise<void>;
}

/**
 * Registers `beforeAll`/`afterAll` (call inside a `describe`) that start two replicas on a new
 * database named after `dbName` (`store` 'sqlite': a new store file), each with a model answering
 * after `modelDelayMs`, and stop them and drop the database after ({@link usePostgresReplicas},
 * {@link useSqliteReplicas}).
 */
export function useAutoClaimReplicas(dbName: string, modelDelayMs: number, store: 'postgres' | 'sqlite' = 'postgres'): AutoClaimReplicas {
  const modelA = new SlowCountingSummarizer(modelDelayMs);
  const modelB = new SlowCountingSummarizer(modelDelayMs);
  const models = { summarizerA: modelA, summarizerB: modelB };
  const started = store === 'sqlite' ? useSqliteReplicas(models) : usePostgresReplicas(dbName, models);
  return {
    get a() {
      return started.a;
    },
    get b() {
      return started.b;
    },
    modelA,
    modelB,
    idle: async () => {
      const both = () => Promise.all([started.a, started.b].map((h) => h.service.app.get(AutoCompactionScheduler).whenIdle()));
      for (let i = 0; i < 3; i++) await both();
      await sleep(600);
      await both();
    },
  };
}
