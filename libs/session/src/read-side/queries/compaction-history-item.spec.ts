import { ReadModelStore } from '../read-model-store';
import { SessionProjector } from '../session-projector';
import { RecordedSessionLog, user } from '../testing/recorded-session-log';
import { COMPACTION_FAILED, type CompactionCompletedData, type CompactionFailedData } from '../../events/session-stream-events';
import { compactionHistoryItem } from './compaction-history-item';
import { listCompactions } from './compaction-history-query';

describe('compactionHistoryItem: durationMs', () => {
  let store: ReadModelStore;
  beforeEach(() => {
    store = ReadModelStore.open(':memory:');
  });
  afterEach(() => store.close());

  it('a failure answers the time its pass ran until it failed; a failure recorded before failures carried it answers null; a completed pass its own', () => {
    const log = new RecordedSessionLog();
    log.append('s1', user('u1', 'hello'));
    log.completed('s1', 'c1');
    // as recorded now: with the time from the pass's start to the failure
    const timed = log.failed('s1', 'c2');
    (timed.data as CompactionFailedData).durationMs = 61_250;
    // as an older version recorded it: no durationMs
    const old = log.failed('s1', 'c3');
    expect([timed.type, old.type, 'durationMs' in (old.data as object)]).toEqual([COMPACTION_FAILED, COMPACTION_FAILED, false]);
    new SessionProjector(store).applyBatch(log.events);
    expect(
      listCompactions(store, 'default', 's1')!
        .map(compactionHistoryItem)
        .map((c) => [c.compactionId, c.outcome, c.durationMs]),
    ).toEqual([
      ['c1', 'compacted', 5],
      ['c2', 'failed', 61_250],
      ['c3', 'failed', null],
    ]);
  });
});

describe('compactionHistoryItem: failure.failureKind', () => {
  let store: ReadModelStore;
  beforeEach(() => {
    store = ReadModelStore.open(':memory:');
  });
  afterEach(() => store.close());

  it('a failure answers the kind it recorded; one recorded before failures carried a kind answers null; a kind outside the closed set reads other', () => {
    const log = new RecordedSessionLog();
    log.append('s1', user('u1', 'hello'));
    const credentials = log.failed('s1', 'c1');
    Object.assign(credentials.data as CompactionFailedData, {
      reason: 'summarizer failed: the model endpoint rejected the credentials: HTTP 401',
      failureKind: 'credentials',
    });
    // as an older version recorded it: no failureKind
    const old = log.failed('s1', 'c2');
    // as a later build might record it: a kind this build does not know
    const later = log.failed('s1', 'c3');
    Object.assign(later.data as CompactionFailedData, { failureKind: 'quota_exhausted' });
    expect('failureKind' in (old.data as object)).toBe(false);
    new SessionProjector(store).applyBatch(log.events);
    expect(
      listCompactions(store, 'default', 's1')!
        .map(compactionHistoryItem)
        .map((c) => [c.compactionId, c.failure?.failureKind]),
    ).toEqual([
      ['c1', 'credentials'],
      ['c2', null],
      ['c3', 'other'],
    ]);
  });
});

describe('compactionHistoryItem: from and policyRevision', () => {
  let store: ReadModelStore;
  beforeEach(() => {
    store = ReadModelStore.open(':memory:');
  });
  afterEach(() => store.close());

  it('an automatic pass answers the policy revision it recorded; one recorded before automatic passes carried it reads null, as before; commanded ones as recorded', () => {
    const log = new RecordedSessionLog();
    log.policy('s1');
    log.append('s1', user('u1', 'hello'));
    // as recorded now: an automatic pass with the revision of the policy it was decided on
    Object.assign(log.completed('s1', 'c1').data as CompactionCompletedData, { origin: 'auto', policyRevision: '0' });
    // as an older version recorded it: an automatic pass without one
    const old = log.completed('s1', 'c2');
    Object.assign(old.data as CompactionCompletedData, { origin: 'auto' });
    // commanded without a strategy, and with one
    Object.assign(log.completed('s1', 'c3').data as CompactionCompletedData, { from: 'policy', policyRevision: '0' });
    log.completed('s1', 'c4');
    expect('policyRevision' in (old.data as object)).toBe(false);
    new SessionProjector(store).applyBatch(log.events);
    expect(
      listCompactions(store, 'default', 's1')!
        .map(compactionHistoryItem)
        .map((c) => [c.compactionId, c.origin, c.from, c.policyRevision]),
    ).toEqual([
      ['c1', 'auto', 'policy', '0'],
      ['c2', 'auto', 'policy', null],
      ['c3', 'command', 'policy', '0'],
      ['c4', 'command', 'request', null],
    ]);
  });
});

describe('compactionHistoryItem: the call an open-tool-call noop names', () => {
  let store: ReadModelStore;
  beforeEach(() => {
    store = ReadModelStore.open(':memory:');
  });
  afterEach(() => store.close());

  it('a noop open-tool-call answers the call and the event holding it, as recorded; other decisions answer null', () => {
    const log = new RecordedSessionLog();
    log.append('s1', user('u1', 'hello'));
    Object.assign(log.completed('s1', 'c1').data as CompactionCompletedData, {
      outcome: 'noop',
      reason: 'open-tool-call',
      toolCallId: 'call_7',
      eventId: 'a3',
    });
    Object.assign(log.completed('s1', 'c2').data as CompactionCompletedData, { outcome: 'noop', reason: 'within-limit' });
    log.completed('s1', 'c3');
    log.failed('s1', 'c4');
    new SessionProjector(store).applyBatch(log.events);
    expect(
      listCompactions(store, 'default', 's1')!
        .map(compactionHistoryItem)
        .map((c) => [c.compactionId, c.outcome, c.reason, c.toolCallId, c.eventId]),
    ).toEqual([
      ['c1', 'noop', 'open-tool-call', 'call_7', 'a3'],
      ['c2', 'noop', 'within-limit', null, null],
      ['c3', 'compacted', null, null, null],
      ['c4', 'failed', null, null, null],
    ]);
  });
});
