/**
 * Property: following a recall cursor returns the hits its first page's moment had, each once, in
 * the order (and with the scores) a one-page answer gave at that moment, whatever happens between
 * pages: appends of matching and other events, compactions archiving hits, erasure of a session
 * (whose hits are then gone). Random corpora over a small vocabulary (rows of different phrase
 * frequencies and lengths), one- to three-word queries of the word index, of the trigram index
 * and of the substring scan (CJK, emoji), with and without `sessionId` and `archived` filters.
 */
import fc from 'fast-check';
import { searchRecall, type RecallHit, type RecallSearch } from './queries/recall-query';
import { ReadModelStore } from './read-model-store';
import { SessionProjector } from './session-projector';
import { RecordedSessionLog, user } from './testing/recorded-session-log';

const SESSIONS = ['s0', 's1', 's2', 's3'];
const LATIN = ['kestrel', 'osprey', 'heron', 'plover', 'pad'];
const CJK = ['東京', '東京タワー', '鶴', '😀'];
const LATIN_QUERIES = ['kestrel', 'osprey', 'kestrel osprey', 'heron kestrel plover', 'plover', 'osprey heron'];
const CJK_QUERIES = ['東京', '鶴', '東京タワー', '東京タワー kestrel', '鶴 😀', '東京 osprey'];

type Change = { kind: 'append'; session: string; words: string[] } | { kind: 'compact'; session: string; share: number } | { kind: 'erase'; session: string };

const words = (vocabulary: string[]) => fc.array(fc.constantFrom(...vocabulary), { minLength: 1, maxLength: 12 });
const text = fc.oneof({ weight: 1, arbitrary: words(LATIN) }, { weight: 1, arbitrary: words([...LATIN, ...CJK]) });
const session = fc.constantFrom(...SESSIONS);
const change: fc.Arbitrary<Change> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('append' as const), session, words: text }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('compact' as const), session, share: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('erase' as const), session }) },
);

describe('recall paging (property)', () => {
  it('returns each hit of the first page’s moment once, in its order and with its scores, whatever changes between pages', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ session, words: text }), { minLength: 15, maxLength: 50 }),
        fc.oneof(fc.constantFrom(...LATIN_QUERIES), fc.constantFrom(...CJK_QUERIES)),
        fc.record({
          sessionId: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: session }),
          archived: fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.boolean() }),
        }),
        fc.integer({ min: 1, max: 3 }),
        fc.array(fc.array(change, { maxLength: 4 }), { maxLength: 30 }),
        (corpus, q, filters, limit, changes) => {
          const log = new RecordedSessionLog();
          const store = ReadModelStore.open(':memory:');
          const projector = new SessionProjector(store);
          let n = 0;
          const active = new Map<string, string[]>(SESSIONS.map((s) => [s, []]));
          const append = (s: string, w: string[]) => {
            const id = `e${n++}`;
            log.append(s, user(id, w.join(' ')));
            active.get(s)!.push(id);
          };
          for (const { session: s, words: w } of corpus) append(s, w);
          // an early compaction, so `archived` filters have something on both sides
          for (const s of ['s0', 's1']) {
            const early = active.get(s)!.splice(0, Math.ceil(active.get(s)!.length / 3));
            if (early.length === 0) continue;
            log.archive(s, `early-${s}`, early);
            log.completed(s, `early-${s}`);
          }
          projector.applyBatch(log.events);

          const search: RecallSearch = { tenantId: 'default', q, ...filters };
          const snapshot = searchRecall(store, { ...search, limit: 100 });
          expect(snapshot.nextCursor).toBeUndefined();
          const erased = new Set<string>();
          const seen: RecallHit[] = [];
          let cursor: string | undefined;
          let page = 0;
          do {
            const answer = searchRecall(store, { ...search, limit, cursor });
            expect(answer.order).toBe(snapshot.order);
            seen.push(...answer.items);
            cursor = answer.nextCursor;
            for (const c of changes[page++] ?? []) {
              if (c.kind === 'append') append(c.session, c.words);
              else if (c.kind === 'erase') {
                projector.applyBatch(log.events);
                projector.eraseSession('default', c.session);
                erased.add(c.session);
              } else {
                const ids = active.get(c.session)!;
                const archived = ids.splice(0, Math.round(ids.length * c.share));
                if (archived.length === 0) continue;
                const compactionId = `c${n++}`;
                log.archive(c.session, compactionId, archived);
                log.summary(c.session, compactionId, ids[0] ?? archived[0], `summary of ${q}`);
                log.completed(c.session, compactionId);
              }
            }
            projector.applyBatch(log.events);
          } while (cursor && page < 200);
          expect(cursor).toBeUndefined();
          // Hits of a session erased after they were answered were answered; the others are gone.
          const answered = new Set(seen.map((h) => `${h.sessionId}/${h.eventId}`));
          const expected = snapshot.items.filter((h) => !erased.has(h.sessionId) || answered.has(`${h.sessionId}/${h.eventId}`));
          expect(seen.map((h) => [h.sessionId, h.eventId, h.score, h.firstMention])).toEqual(
            expected.map((h) => [h.sessionId, h.eventId, h.score, h.firstMention]),
          );
          store.close();
        },
      ),
      { numRuns: 300 },
    );
  });
});
