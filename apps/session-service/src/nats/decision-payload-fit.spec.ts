/**
 * {@link fitDecisionPayload}: the decisions feed's message body always fits in the server's
 * `max_payload` (newcomer ncnats72 F1: a `CompactionCompleted` whose `archivedBecause` alone was
 * over it stalled the feed for ever). Examples, then a property over random decisions with random
 * large lists and a limit at least the smallest form's size (the envelope, the identity members,
 * and `omitted` naming every other member).
 */
import fc from 'fast-check';
import { DECISION_ID_LISTS, DECISION_IDENTITY, fitDecisionPayload } from './decision-payload-fit';
import type { PublishedDecision } from './decision-feed-publisher';

const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8');
const parse = (payload: Uint8Array): PublishedDecision => JSON.parse(Buffer.from(payload).toString('utf8')) as PublishedDecision;
const ids = (prefix: string, n: number, length = 40): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`.padEnd(length, 'x'));

const envelope = (type: string, decision: Record<string, unknown>): PublishedDecision => ({
  type,
  tenantId: 'tenant-a',
  sessionId: 'session-1',
  position: '1234',
  revision: '17',
  recordedAt: '2026-12-07T10:00:00.000Z',
  decision,
});

/** A `CompactionCompleted` as the feed publishes it: `archived` ids, the first `cut` by the strategy's cut, the rest moved to a turn start. */
const completed = (archived: string[], kept: string[], cut = archived.length): PublishedDecision =>
  envelope('CompactionCompleted', {
    compactionId: '3f8e2a4c-1b2d-4e5f-8a9b-0c1d2e3f4a5b',
    outcome: 'compacted',
    trigger: null,
    strategy: { type: 'sliding-window', maxEvents: 2 },
    estimator: 'cl100k_base',
    archivedCount: archived.length,
    keptCount: kept.length,
    tokensBefore: 5000,
    tokensAfter: 20,
    tokensEstimatedSaved: 4980,
    basedOnRevision: '16',
    keptIds: kept,
    archivedBecause: { strategyCut: archived.slice(0, cut), turnStart: archived.slice(cut), supersededSystem: [], replacedSummaries: [] },
    durationMs: 3,
    completedAt: '2026-12-07T10:00:00.000Z',
    origin: 'command',
    requestedBy: { requestId: 'r-1', via: 'nats' },
    paramsKey: '{"strategy":{"maxEvents":2,"type":"sliding-window"}}',
    archivedIds: archived,
  });

describe('fitDecisionPayload', () => {
  it('given a decision that fits, then it is published whole, byte for byte', () => {
    const decision = completed(ids('a', 10), ids('k', 2));
    const whole = JSON.stringify(decision);
    expect(Buffer.from(fitDecisionPayload(decision, Buffer.byteLength(whole))).toString('utf8')).toBe(whole);
  });

  it('given a CompactionCompleted whose archivedBecause alone is over the limit, then it goes without keptIds, archivedIds and archivedBecause, everything else kept', () => {
    const decision = completed(ids('archived-', 2000), ids('kept-', 2));
    const limit = 60_000;
    expect(bytes(decision.decision.archivedBecause)).toBeGreaterThan(limit);
    const payload = fitDecisionPayload(decision, limit);
    expect(payload.length).toBeLessThanOrEqual(limit);
    const { keptIds: _k, archivedIds: _a, archivedBecause: _b, ...rest } = decision.decision;
    expect(parse(payload)).toEqual({ ...decision, decision: { ...rest, omitted: ['keptIds', 'archivedIds', 'archivedBecause'] } });
  });

  it('given a decision over the limit by its keptIds only, then every id list goes all the same (one rule: a decision with omitted is read over HTTP)', () => {
    const decision = completed(ids('a', 3), ids('kept-', 2000));
    const payload = fitDecisionPayload(decision, 60_000);
    expect(parse(payload).decision.omitted).toEqual(['keptIds', 'archivedIds', 'archivedBecause']);
  });

  it('given a CompactionFailed over the limit, then it goes without archivedIds and plannedArchivedIds', () => {
    const decision = envelope('CompactionFailed', {
      compactionId: 'c-1',
      stage: 'summarize',
      reason: 'timeout',
      archivedIds: ids('sys-', 5),
      plannedArchivedIds: ids('planned-', 3000),
      tokensBefore: 100,
    });
    const payload = fitDecisionPayload(decision, 10_000);
    expect(parse(payload).decision).toEqual({
      compactionId: 'c-1',
      stage: 'summarize',
      reason: 'timeout',
      tokensBefore: 100,
      omitted: ['archivedIds', 'plannedArchivedIds'],
    });
  });

  it('given a decision still over the limit without its id lists, then its other members go, the largest first, until it fits; its identity stays', () => {
    const decision = envelope('CompactionFailed', {
      compactionId: 'c-2',
      archivedIds: ids('sys-', 500),
      reason: 'r'.repeat(30_000),
      summarizer: { kind: 'openai-compatible', model: 'm'.repeat(20_000) },
      paramsKey: 'p'.repeat(10_000),
      stage: 'summarize',
    });
    const payload = fitDecisionPayload(decision, 15_000);
    expect(payload.length).toBeLessThanOrEqual(15_000);
    expect(parse(payload)).toEqual({
      ...decision,
      decision: { compactionId: 'c-2', paramsKey: 'p'.repeat(10_000), stage: 'summarize', omitted: ['archivedIds', 'reason', 'summarizer'] },
    });
  });

  it('counts UTF-8 bytes, not characters: ids of 4-byte characters under the limit in characters are over it in bytes', () => {
    const decision = completed(ids('😀', 300, 20), ids('k', 2));
    const json = JSON.stringify(decision);
    const limit = json.length + 10; // characters (UTF-16 units) fit, bytes do not
    expect(Buffer.byteLength(json)).toBeGreaterThan(limit);
    const payload = fitDecisionPayload(decision, limit);
    expect(payload.length).toBeLessThanOrEqual(limit);
    expect(parse(payload).decision.omitted).toEqual(['keptIds', 'archivedIds', 'archivedBecause']);
  });

  it('given a limit below even the identity, then the smallest form: the envelope, the identity members, omitted naming the rest', () => {
    const decision = envelope('EventsArchived', { compactionId: 'c-3', archivedIds: ids('late-', 10), onArrival: true });
    expect(parse(fitDecisionPayload(decision, 10)).decision).toEqual({ compactionId: 'c-3', onArrival: true, omitted: ['archivedIds'] });
  });
});

/** Member names of the random decisions besides the lists and the identity (never `omitted`). */
const otherName = fc
  .stringMatching(/^[a-zA-Z][a-zA-Z0-9]{0,11}$/)
  .filter((n) => n !== 'omitted' && !DECISION_ID_LISTS.includes(n) && !DECISION_IDENTITY.includes(n));
const id = fc.string({ minLength: 1, maxLength: 128, unit: 'grapheme-ascii' });
const eventId = fc.string({ minLength: 1, maxLength: 256, unit: fc.constantFrom('a', 'é', '😀', '"', '\\', '\u2028') });
const idList = fc.array(eventId, { maxLength: 400 });

const randomDecision: fc.Arbitrary<PublishedDecision> = fc
  .record(
    {
      type: fc.constantFrom('CompactionCompleted', 'CompactionFailed', 'EventsArchived', 'SessionErased'),
      tenantId: id,
      sessionId: id,
      position: fc.bigInt({ min: 1n, max: 2n ** 62n }).map(String),
      revision: fc.option(fc.bigInt({ min: 0n, max: 2n ** 62n }).map(String), { nil: null }),
      recordedAt: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      identity: fc.record(
        {
          compactionId: fc.uuid(),
          outcome: fc.constantFrom('compacted', 'noop'),
          onArrival: fc.constant(true),
          sessionId: id,
          lastRevision: fc.bigInt({ min: 0n, max: 2n ** 62n }).map(String),
        },
        { requiredKeys: [] },
      ),
      lists: fc.record(
        {
          keptIds: idList,
          archivedIds: idList,
          archivedBecause: fc.record({ strategyCut: idList, turnStart: idList, supersededSystem: idList, replacedSummaries: idList }),
          plannedArchivedIds: idList,
        },
        { requiredKeys: [] },
      ),
      others: fc.dictionary(otherName, fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.string({ maxLength: 20_000 })), { maxKeys: 12 }),
    },
    { noNullPrototype: true },
  )
  .map(({ identity, lists, others, ...envelopeMembers }) => ({ ...envelopeMembers, decision: { ...others, ...lists, ...identity } }));

/** Bytes of the smallest form of `decision`: its envelope, its identity members, and `omitted` naming every other member. */
function smallestForm(decision: PublishedDecision): number {
  const identity = Object.entries(decision.decision).filter(([name]) => DECISION_IDENTITY.includes(name));
  const others = Object.keys(decision.decision).filter((name) => !DECISION_IDENTITY.includes(name));
  return bytes({ ...decision, decision: { ...Object.fromEntries(identity), omitted: others } });
}

describe('fitDecisionPayload, any decision', () => {
  it('is at most the limit, JSON, keeps the envelope and identity, names exactly what it left out (every id list first, then the largest); a decision that fits is unchanged', () => {
    fc.assert(
      fc.property(randomDecision, fc.integer({ min: 0, max: 1000 }), (decision, perMille) => {
        const whole = bytes(decision);
        const least = smallestForm(decision);
        const limit = least + Math.floor(((whole + 100 - least) * perMille) / 1000);
        const payload = fitDecisionPayload(decision, limit);
        expect(payload.length).toBeLessThanOrEqual(limit);
        const out = parse(payload);
        if (whole <= limit) {
          expect(Buffer.from(payload).toString('utf8')).toBe(JSON.stringify(decision));
          return;
        }
        const { decision: outDecision, ...outEnvelope } = out;
        // compared as JSON carries them (a -0 the arbitrary makes is 0 once sent; a decision read from the log holds none)
        const { decision: inDecision, ...inEnvelope } = JSON.parse(JSON.stringify(decision)) as PublishedDecision;
        expect(outEnvelope).toEqual(inEnvelope);
        const { omitted, ...kept } = outDecision as Record<string, unknown> & { omitted: string[] };
        // kept members are the original's, unchanged, and omitted names exactly the others, once each
        for (const [name, value] of Object.entries(kept)) expect(value).toEqual(inDecision[name]);
        expect([...omitted].sort()).toEqual(
          Object.keys(inDecision)
            .filter((name) => !(name in kept))
            .sort(),
        );
        expect(new Set(omitted).size).toBe(omitted.length);
        for (const name of DECISION_IDENTITY) if (name in inDecision) expect(kept[name]).toEqual(inDecision[name]);
        // every id list goes at once, first; then the other members largest first
        const lists = DECISION_ID_LISTS.filter((name) => name in inDecision);
        expect(omitted.slice(0, lists.length)).toEqual(lists);
        const size = (name: string) => bytes(name) + 1 + bytes(inDecision[name]);
        const dropped = omitted.slice(lists.length).map(size);
        const keptOthers = Object.keys(kept)
          .filter((name) => !DECISION_IDENTITY.includes(name))
          .map(size);
        expect([...dropped].sort((a, b) => b - a)).toEqual(dropped);
        if (dropped.length > 0 && keptOthers.length > 0) expect(Math.min(...dropped)).toBeGreaterThanOrEqual(Math.max(...keptOthers));
      }),
      { numRuns: 200 },
    );
  });
});
