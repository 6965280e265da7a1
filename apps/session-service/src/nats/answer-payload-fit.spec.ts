/**
 * {@link answerPayload}: a command's answer always fits in the server's `max_payload` (less room for
 * headers), by the decisions feed's rule (json-members-fit). Before, a compaction answer dropped
 * `kept`, `archived` and `summary` and was published however large it still was, so an answer with
 * another large member was refused, never stored, and its command redelivered for ever.
 */
import fc from 'fast-check';
import { ANSWER_FIT, answerPayload } from './answer-payload-fit';

const parse = (bytes: Uint8Array) => JSON.parse(Buffer.from(bytes).toString('utf8')) as Record<string, unknown>;
const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('answerPayload', () => {
  const compaction = (archived: string[], extra: Record<string, unknown> = {}) => ({
    compactionId: 'c-1',
    outcome: 'compacted',
    archived,
    kept: ids('k', 3),
    summary: { id: 's', text: 'recap', coveredIds: archived },
    tokensBefore: 10,
    revision: '12',
    position: '40',
    recorded: true,
    ...extra,
  });

  it('an answer that fits is published as it is, byte for byte', () => {
    const body = compaction(ids('a', 3));
    const whole = JSON.stringify(body);
    expect(Buffer.from(answerPayload(body, Buffer.byteLength(whole))).toString('utf8')).toBe(whole);
  });

  it('over the limit: without kept, archived and summary, named in omitted', () => {
    const body = compaction(ids('archived-event-', 2_000));
    const payload = answerPayload(body, 2_000);
    expect(payload.length).toBeLessThanOrEqual(2_000);
    expect(parse(payload)).toEqual({
      compactionId: 'c-1',
      outcome: 'compacted',
      tokensBefore: 10,
      revision: '12',
      position: '40',
      recorded: true,
      omitted: ['kept', 'archived', 'summary'],
    });
  });

  it('another large member goes too, the largest first: the answer always fits (the old rule published it over the limit)', () => {
    const body = compaction(ids('a', 10), { pendingSummary: { text: 'x'.repeat(50_000) }, note: 'y'.repeat(20_000) });
    const payload = answerPayload(body, 5_000);
    expect(payload.length).toBeLessThanOrEqual(5_000);
    expect(parse(payload).omitted).toEqual(['kept', 'archived', 'summary', 'pendingSummary', 'note']);
    expect(parse(payload)).toMatchObject({ compactionId: 'c-1', outcome: 'compacted', revision: '12', position: '40' });
  });

  it('property: any object answer fits a limit its kept members fit, keeps them, and names exactly what it left out', () => {
    const member = fc.oneof(fc.string({ maxLength: 3_000 }), fc.array(fc.string({ maxLength: 40 }), { maxLength: 200 }), fc.integer());
    fc.assert(
      fc.property(fc.dictionary(fc.stringMatching(/^[a-z]{1,8}$/), member), fc.integer({ min: 300, max: 20_000 }), (extra, limit) => {
        const body = { code: 'x', revision: '1', ...extra };
        delete (body as Record<string, unknown>).omitted;
        const payload = parse(answerPayload(body, limit));
        const whole = Buffer.byteLength(JSON.stringify(body));
        if (whole <= limit) return expect(payload).toEqual(body);
        expect(Buffer.byteLength(JSON.stringify(payload))).toBeLessThanOrEqual(limit);
        const omitted = payload.omitted as string[];
        for (const name of ANSWER_FIT.neverOmitted) if (name in body) expect(payload[name]).toEqual((body as Record<string, unknown>)[name]);
        expect([...Object.keys(payload).filter((k) => k !== 'omitted'), ...omitted].sort()).toEqual(Object.keys(body).sort());
      }),
      { numRuns: 200 },
    );
  });
});
