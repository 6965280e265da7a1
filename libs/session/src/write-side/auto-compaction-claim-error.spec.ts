/**
 * An automatic pass whose scheduler could not ask for the session's claim (the store's claims
 * connection failed: `tryClaim` threw) asks for it again itself before it calls the model
 * (`schedulerClaim` `failed`, `passClaimsHere`). Before, it ran unclaimed: when another replica held
 * the claim and was calling its model for the same window, both called the model for one decision.
 */
import { Logger } from '@nestjs/common';
import type { CommandBus, EventBus } from '@nestjs/cqrs';
import { parseStrategy, parseTrigger, type SummaryRequest } from '@lib/compaction';
import { SqliteEventStore, storeWith, type HeldClaim } from '@lib/event-store';
import { COMPACTION_COMPLETED } from '../events/session-stream-events';
import type { Summarizer, SummarizerOutcome } from '../summarizers/summarizer';
import { AppendSessionEventsCommand, AppendSessionEventsHandler, SessionEventsAppended } from './append-session-events';
import { AutoCompactionScheduler, DEFAULT_SESSION_SETTINGS, type SessionSettings } from './auto-compaction';
import { CompactSessionHandler } from './compact-session';
import type { CompactSessionCommand } from './compact-session-command';
import { SessionClaims, sessionClaimName } from './session-claims';
import { SessionStateCache } from './session-state-cache';
import { SetCompactionPolicyCommand, SetCompactionPolicyHandler } from './set-compaction-policy';

const CLAIM = sessionClaimName('t', 's');
const strategy = parseStrategy({ type: 'recursive-summarization', maxEventsToKeep: 3, overlapSize: 1 });
const trigger = parseTrigger({ type: 'turn-count', maxTurns: 5 });
const settings: SessionSettings = { ...DEFAULT_SESSION_SETTINGS, compactionClaimPollMs: 10 };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One replica (this process: scheduler, compaction handler, claims) on a store whose claims the
 * test shares with "another replica" (`holders`: claim name → holder). `failures` of this replica's
 * claim attempts throw first, as a lost claims connection does.
 */
function replica(failures: number) {
  const base = SqliteEventStore.open(':memory:');
  const holders = new Map<string, string>();
  const attempts: Array<'threw' | 'held elsewhere' | 'got'> = [];
  let failing = failures;
  const store = storeWith(base, {
    tryClaim: async (name: string): Promise<HeldClaim | null> => {
      if (failing > 0) {
        failing--;
        attempts.push('threw');
        throw new Error('claims connection: Connection terminated unexpectedly');
      }
      if (holders.has(name)) {
        attempts.push('held elsewhere');
        return null;
      }
      attempts.push('got');
      holders.set(name, 'this replica');
      return { release: async () => void holders.delete(name) };
    },
  });
  /** The model: counts its calls and who held the claim when each was made. */
  const calls: Array<string | undefined> = [];
  const summarizer: Summarizer = {
    identity: { kind: 'extractive', model: 'counting' },
    async summarize(request: SummaryRequest): Promise<SummarizerOutcome> {
      calls.push(holders.get(CLAIM));
      return { ok: true, text: `recap of ${request.coveredIds.length}`, calls: 1, promptTokens: 10, completionTokens: 5 };
    },
  };
  const cache = new SessionStateCache(store);
  const claims = new SessionClaims(settings, store);
  const handler = new CompactSessionHandler(
    store,
    cache,
    summarizer,
    { publish: () => undefined } as unknown as EventBus,
    undefined,
    settings,
    undefined,
    claims,
  );
  const commandBus = { execute: (command: CompactSessionCommand) => handler.execute(command) } as unknown as CommandBus;
  let scheduler: AutoCompactionScheduler | undefined;
  const bus = { publish: (e: unknown) => e instanceof SessionEventsAppended && scheduler?.handle(e) } as unknown as EventBus;
  const append = new AppendSessionEventsHandler(store, cache, bus);
  const say = (id: string) => append.execute(new AppendSessionEventsCommand('t', 's', [{ event: { id, type: 'user', text: `user text ${id}` } }]));
  const start = async (turns: number) => {
    for (let n = 0; n < turns; n++) await say(`u${n}`);
    await new SetCompactionPolicyHandler(store, cache, summarizer).execute(new SetCompactionPolicyCommand('t', 's', strategy, trigger, 'chars'));
    scheduler = new AutoCompactionScheduler(commandBus, cache, settings, { publish: () => undefined } as unknown as EventBus, claims);
    return scheduler;
  };
  const decisions = async () => (await base.readStream('session-t.s')).filter((e) => e.type === COMPACTION_COMPLETED).length;
  return { base, holders, attempts, calls, say, start, decisions };
}

describe('an automatic pass whose scheduler could not ask for the claim (PostgreSQL replicas)', () => {
  let warn: jest.SpyInstance;
  let debug: jest.SpyInstance;
  beforeEach(() => {
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    debug = jest.spyOn(Logger.prototype, 'debug').mockImplementation(() => undefined);
  });
  afterEach(() => {
    warn.mockRestore();
    debug.mockRestore();
  });

  it('asks for it itself before calling the model: held by another replica, it calls none until that one lets go, then one call under its own claim', async () => {
    const r = replica(1);
    try {
      const scheduler = await r.start(5);
      // another replica's pass holds the session's claim (and calls its model for this window)
      r.holders.set(CLAIM, 'other replica');
      await r.say('u5');
      for (let i = 0; i < 200 && r.attempts.filter((a) => a === 'held elsewhere').length < 3; i++) await sleep(10);
      // was: the pass ran unclaimed at once, a model call for the window the other replica was compacting
      expect(r.calls).toEqual([]);
      expect(r.attempts.slice(0, 2)).toEqual(['threw', 'held elsewhere']);
      expect(scheduler.waitingForClaim).toBe(1);
      r.holders.delete(CLAIM);
      for (let i = 0; i < 200 && r.calls.length === 0; i++) await sleep(10);
      await scheduler.whenIdle();
      expect(r.calls).toEqual(['this replica']);
      expect(await r.decisions()).toBe(1);
      expect(r.holders.size).toBe(0);
      expect(warn.mock.calls.filter(([line]) => /runs unclaimed/.test(String(line)))).toEqual([]);
    } finally {
      await r.base.close();
    }
  });

  it('the claim free and the store answering again: the pass takes it and calls the model once under it, no warn line', async () => {
    const r = replica(1);
    try {
      const scheduler = await r.start(5);
      await r.say('u5');
      for (let i = 0; i < 200 && r.calls.length === 0; i++) await sleep(10);
      await scheduler.whenIdle();
      // was: ['threw'] and a call made unclaimed (undefined), with a warn line
      expect(r.attempts).toEqual(['threw', 'got']);
      expect(r.calls).toEqual(['this replica']);
      expect(await r.decisions()).toBe(1);
      expect(warn.mock.calls.filter(([line]) => /runs unclaimed/.test(String(line)))).toEqual([]);
    } finally {
      await r.base.close();
    }
  });

  it('the store failing again when the pass asks: it runs unclaimed, one warn line saying so', async () => {
    const r = replica(2);
    try {
      const scheduler = await r.start(5);
      await r.say('u5');
      for (let i = 0; i < 200 && r.calls.length === 0; i++) await sleep(10);
      await scheduler.whenIdle();
      expect(r.attempts).toEqual(['threw', 'threw']);
      expect(r.calls).toEqual([undefined]);
      expect(await r.decisions()).toBe(1);
      const lines = warn.mock.calls.map(([line]) => String(line)).filter((line) => /runs unclaimed/.test(line));
      expect(lines).toEqual([
        expect.stringMatching(/^compaction of session "s" \(tenant "t"\) runs unclaimed: its claim could not be asked for: Error: claims connection/),
      ]);
    } finally {
      await r.base.close();
    }
  });
});
