/**
 * Which decisions an erasure record deletes from the NATS decisions stream
 * (`eraseSessionCopies`): those of the life it closes, by revision (the rule the read models apply,
 * `erasedRowsOf`), not every decision published before the record. A session written again with the
 * same id between the stream deletion and the record (an erasure interrupted after its deletion
 * and finished later, or one whose record waited for other records of the tenant) keeps the
 * decisions of its new life, published for positions before the record. Records without
 * `lastRevision` keep their rule (by position). The same for answers on the results stream, by the
 * basis each carries (`AnswerBasis`): those of the erased life go, those of the new life stay, and
 * so do neither an answer without a basis (an earlier release's) nor one of another log. Needs NATS
 * at `NATS_TEST_URL` (own prefix).
 */
import { headers } from '@nats-io/transport-node';
import { erasedRowsOf, type SessionErasedData } from '@lib/session';
import { deleteStreams, describeWithNats, uniquePrefix, useNatsSuite } from '../support/nats-test';
import { ensureStreams } from '../../apps/session-service/src/nats/nats-streams';
import { eraseSessionCopies } from '../../apps/session-service/src/nats/nats-erasure';
import { LOG_EVENT_HEADER, LOG_POSITION_HEADER, decisionSubject, natsNames, resultSubject } from '../../apps/session-service/src/nats/nats-names';
import { setAnswerBasisHeaders, type AnswerBasis } from '../../apps/session-service/src/nats/answer-basis';

describeWithNats('NATS erasure bound')('an erasure record deletes the decisions of the life it closes', () => {
  jest.setTimeout(30_000);
  const prefix = uniquePrefix();
  const names = natsNames(prefix);
  const subject = decisionSubject(prefix, 't', 's');

  const nats = useNatsSuite('nats erasure bound', { prefixes: [prefix] });
  beforeEach(async () => {
    await deleteStreams(nats.client.jsm, prefix);
    await ensureStreams(nats.client.jsm, names, 5000);
  });
  afterAll(() => nats.close());

  /** Publishes a decision of session `s` as the feed does: for the event of `revision` (null: an erasure record) at `position`. */
  const publish = async (type: string, position: number, revision: number | null) => {
    const h = headers();
    h.set(LOG_POSITION_HEADER, String(position));
    h.set(LOG_EVENT_HEADER, `session-t:s@${revision ?? 0} id-${position} 2026-01-01T00:00:00.000Z`);
    const body = { type, tenantId: 't', sessionId: 's', position: String(position), revision: revision === null ? null : String(revision), decision: {} };
    await nats.client.js.publish(subject, JSON.stringify(body), { headers: h, msgID: `${prefix}-${position}` });
  };

  /** The positions of the decisions of session `s` left in the stream. */
  const left = async (): Promise<number[]> => {
    const out: number[] = [];
    for (let seq = 1; ;) {
      const m = await nats.client.jsm.streams.getMessage(names.decisionStream, { seq, next_by_subj: subject } as never);
      if (!m) return out;
      out.push(Number(m.header.get(LOG_POSITION_HEADER)));
      seq = m.seq + 1;
    }
  };

  /**
   * The erased life: decisions of revisions 1 and 3 (positions 2 and 4); the stream deleted; the
   * id written again: decisions of revisions 5 and 6 (positions 7 and 8), before the record at 9;
   * then a decision of revision 7 after it (position 10).
   */
  const lifeAndNewLife = async () => {
    await publish('CompactionCompleted', 2, 1);
    await publish('CompactionCompleted', 4, 3);
    await publish('CompactionCompleted', 7, 5);
    await publish('EventsArchived', 8, 6);
    await publish('SessionErased', 9, null);
    await publish('CompactionCompleted', 10, 7);
  };

  it('given a record with lastRevision, when the session was written again before it, then the new life’s decisions stay and the erased life’s go', async () => {
    await lifeAndNewLife();
    const data: SessionErasedData = { sessionId: 's', erasedEvents: 4, erasedAt: '2026-01-01T00:00:00.000Z', lastPosition: '4', lastRevision: '3' };
    const erased = await eraseSessionCopies(nats.client.jsm, names, 't', 's', { position: 9n, rows: erasedRowsOf(data) }, () => Promise.resolve(false));
    expect(erased.decisions).toBe(2);
    expect(await left()).toEqual([7, 8, 9, 10]);
  });

  it('given a record without lastRevision (an older build), then the decisions before its lastPosition go, or before the record without one', async () => {
    await lifeAndNewLife();
    const legacy: SessionErasedData = { sessionId: 's', erasedEvents: 4, erasedAt: '2026-01-01T00:00:00.000Z', lastPosition: '4' };
    await eraseSessionCopies(nats.client.jsm, names, 't', 's', { position: 9n, rows: erasedRowsOf(legacy) }, () => Promise.resolve(false));
    expect(await left()).toEqual([7, 8, 9, 10]);
    const older: SessionErasedData = { sessionId: 's', erasedEvents: 4, erasedAt: '2026-01-01T00:00:00.000Z' };
    await eraseSessionCopies(nats.client.jsm, names, 't', 's', { position: 9n, rows: erasedRowsOf(older) }, () => Promise.resolve(false));
    expect(await left()).toEqual([9, 10]);
  });

  it('given decisions of another log after the erased life, then they go too', async () => {
    await lifeAndNewLife();
    const data: SessionErasedData = { sessionId: 's', erasedEvents: 4, erasedAt: '2026-01-01T00:00:00.000Z', lastRevision: '3' };
    await eraseSessionCopies(nats.client.jsm, names, 't', 's', { position: 9n, rows: erasedRowsOf(data) }, (m) => Promise.resolve(m.position === 8n));
    expect(await left()).toEqual([7, 9, 10]);
  });

  describe('answers', () => {
    const results = resultSubject(prefix, 't', 's');

    /** Publishes answer `name` of session `s` on the results subject, with `basis` (none: an earlier release's). */
    const answer = async (name: string, basis: AnswerBasis | null) => {
      const h = headers();
      h.set('Command-Id', name);
      if (basis) setAnswerBasisHeaders(h, basis);
      await nats.client.js.publish(results, JSON.stringify({ name }), { headers: h, msgID: `${prefix}-${name}` });
    };

    /** The names of the answers of session `s` left in the stream. */
    const answersLeft = async (): Promise<string[]> => {
      const out: string[] = [];
      for (let seq = 1; ;) {
        const m = await nats.client.jsm.streams.getMessage(names.resultStream, { seq, next_by_subj: results } as never);
        if (!m) return out;
        out.push(m.header.get('Command-Id'));
        seq = m.seq + 1;
      }
    };

    /**
     * As {@link lifeAndNewLife}: answers decided on revisions 1 and 3 (positions 2 and 4), one of an
     * earlier release; then, the stream deleted, one decided on the empty session (incarnation 4,
     * head 5) and ones decided on revisions 5 and 6 (positions 7 and 8), before the record at 9;
     * one after it.
     */
    const answers = async () => {
      await answer('old-1', { revision: 1n, position: 2n, event: 'session-t.s@1 a 2026-01-01T00:00:00.000Z' });
      await answer('old-3', { revision: 3n, position: 4n, event: 'session-t.s@3 b 2026-01-01T00:00:00.000Z' });
      await answer('earlier-release', null);
      await answer('new-empty', { revision: 4n, position: 5n, event: null });
      await answer('new-5', { revision: 5n, position: 7n, event: 'session-t.s@5 c 2026-01-01T00:00:00.000Z' });
      await answer('new-6', { revision: 6n, position: 8n, event: 'session-t.s@6 d 2026-01-01T00:00:00.000Z' });
      await answer('new-after', { revision: 7n, position: 10n, event: 'session-t.s@7 e 2026-01-01T00:00:00.000Z' });
    };

    it('given a record with lastRevision, then the erased life’s answers and those without a basis go, the new life’s stay', async () => {
      await answers();
      const data: SessionErasedData = { sessionId: 's', erasedEvents: 4, erasedAt: '2026-01-01T00:00:00.000Z', lastPosition: '4', lastRevision: '3' };
      const erased = await eraseSessionCopies(nats.client.jsm, names, 't', 's', { position: 9n, rows: erasedRowsOf(data) }, () => Promise.resolve(false));
      expect(erased.results).toBe(3);
      expect(await answersLeft()).toEqual(['new-empty', 'new-5', 'new-6', 'new-after']);
    });

    it('given a record without lastRevision (an older build), then the answers decided before the record go', async () => {
      await answers();
      const legacy: SessionErasedData = { sessionId: 's', erasedEvents: 4, erasedAt: '2026-01-01T00:00:00.000Z', lastPosition: '4' };
      await eraseSessionCopies(nats.client.jsm, names, 't', 's', { position: 9n, rows: erasedRowsOf(legacy) }, () => Promise.resolve(false));
      expect(await answersLeft()).toEqual(['new-after']);
    });

    it('given answers of another log after the erased life, then they go too', async () => {
      await answers();
      const data: SessionErasedData = { sessionId: 's', erasedEvents: 4, erasedAt: '2026-01-01T00:00:00.000Z', lastRevision: '3' };
      await eraseSessionCopies(nats.client.jsm, names, 't', 's', { position: 9n, rows: erasedRowsOf(data) }, (m) => Promise.resolve(m.position === 7n));
      expect(await answersLeft()).toEqual(['new-empty', 'new-6', 'new-after']);
    });
  });
});
