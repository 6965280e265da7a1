/**
 * A command by policy (`POST …/compactions {}`) that reaches the compaction handler just before the automatic pass an
 * append started, on the same replica, while the scheduler holds the session's claim (PostgreSQL, SQLite on a file):
 * the automatic pass runs and calls the model once, the command then takes the claim and answers the automatic
 * pass's decision (`replayed`). Before, the automatic pass shared the command's pass, which waited for the claim the
 * scheduler held for that automatic pass: both waited until the command's wait for the claim ran out (15 s), then the
 * command ran unclaimed and recorded the decision as its own (newcomer ncops65 F1).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import type { EventBus } from '@nestjs/cqrs';
import { parseStrategy, parseTrigger, type SummaryRequest } from '@lib/compaction';
import { SqliteEventStore, type HeldClaim } from '@lib/event-store';
import { COMPACTION_COMPLETED, sessionKey, sessionStream } from '../events/session-stream-events';
import type { Summarizer, SummarizerOutcome } from '../summarizers/summarizer';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { DEFAULT_SESSION_SETTINGS, type SessionSettings } from './auto-compaction';
import { CompactSessionCommand, CompactSessionHandler } from './compact-session';
import { SessionClaims } from './session-claims';
import { SessionStateCache } from './session-state-cache';
import { SetCompactionPolicyCommand, SetCompactionPolicyHandler } from './set-compaction-policy';

/** Waits up to 30 s for a claim held elsewhere: the old deadlock would hold the test that long, past its timeout. */
const settings: SessionSettings = { ...DEFAULT_SESSION_SETTINGS, compactionClaimPollMs: 10, compactionCommandClaimMaxWaitMs: 30_000 };
const noBus = { publish: () => undefined } as unknown as EventBus;
const strategy = parseStrategy({ type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 0 });
const trigger = parseTrigger({ type: 'turn-count', maxTurns: 2 });

describe('a command by policy and the automatic pass on one replica, the scheduler holding the claim', () => {
  let dir: string;
  let store: SqliteEventStore;
  let warn: jest.SpyInstance;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'policy-command-auto-'));
    store = SqliteEventStore.open(join(dir, 'events.sqlite'));
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterEach(async () => {
    warn.mockRestore();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('given the command waiting for the claim, when the automatic pass runs, then it records the decision (origin auto) with one model call and the command answers it', async () => {
    const cache = new SessionStateCache(store);
    let calls = 0;
    const summarizer: Summarizer = {
      identity: { kind: 'openai-compatible', model: 'counting' },
      async summarize(request: SummaryRequest): Promise<SummarizerOutcome> {
        calls++;
        return { ok: true, text: `recap of ${request.coveredIds.length} events`, calls: 1, promptTokens: 10, completionTokens: 5 };
      },
    };
    const append = new AppendSessionEventsHandler(store, cache, noBus);
    for (let n = 0; n < 4; n++)
      await append.execute(
        new AppendSessionEventsCommand('t', 's', [
          { event: { id: `u${n}`, type: 'user', text: `question ${n}` } },
          { event: { id: `a${n}`, type: 'assistant', text: `answer ${n}` } },
        ]),
      );
    await new SetCompactionPolicyHandler(store, cache, summarizer).execute(new SetCompactionPolicyCommand('t', 's', strategy, trigger, 'chars'));
    const claims = new SessionClaims(settings, store);
    const handler = new CompactSessionHandler(store, cache, summarizer, noBus, undefined, settings, undefined, claims);

    // The scheduler took the claim for the automatic pass an append started (its trigger fires)...
    const held = await claims.tryClaimForScheduler('t', 's');
    expect(held).not.toBeNull();
    expect(typeof held).toBe('object');
    // ...and the command by policy reaches the handler first: it plans, and waits for that claim.
    const commanded = handler.execute(new CompactSessionCommand('t', 's', null, null, null, false));
    while (claims.commandsWaiting === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    // The automatic pass, as the scheduler sends it, then releases the claim.
    const auto = await handler
      .execute(new CompactSessionCommand('t', 's', strategy, trigger, 'chars', false, 'auto', undefined, false, undefined, 'held'))
      .finally(() => (held as HeldClaim).release());
    const answered = await commanded;

    expect(auto).toMatchObject({ outcome: 'compacted' });
    expect(auto.replayed).toBeFalsy();
    expect(answered).toMatchObject({ outcome: 'compacted', replayed: true, compactionId: auto.compactionId });
    expect(calls).toBe(1);
    const decisions = (await store.readStream(sessionStream(sessionKey('t', 's')))).filter((e) => e.type === COMPACTION_COMPLETED);
    expect(decisions.map((e) => (e.data as { origin: string }).origin)).toEqual(['auto']);
    expect(warn.mock.calls.map(([line]) => String(line)).filter((line) => line.includes('runs unclaimed'))).toEqual([]);
  }, 20_000);
});
