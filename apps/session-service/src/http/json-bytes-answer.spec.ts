import fc from 'fast-check';
import { jsonInTurns, sendJsonBytes, JSON_CONTENT_TYPE } from './json-bytes-answer';
import type { FastifyReply } from 'fastify';

/** Turns of the event loop (setImmediate callbacks) that ran while `work` was pending. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let settled = false;
  const tick = (): void => {
    if (settled) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  try {
    return { result: await work(), turns };
  } finally {
    settled = true;
  }
}

describe('jsonInTurns', () => {
  it('gives the bytes of JSON.stringify for any JSON value, strings with lone surrogates and escapes included', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), fc.string({ unit: 'binary' }), async (value, text) => {
        for (const v of [value, { text, value }, [text, value, null]]) {
          expect((await jsonInTurns(v)).equals(Buffer.from(JSON.stringify(v), 'utf8'))).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('gives the bytes of JSON.stringify for an answer with undefined members, dates and nested arrays', async () => {
    const answer = { a: undefined, b: [undefined, () => 1, new Date(0)], c: { d: -0, e: 1e21, f: 'x\u2028y"\\' } };
    expect((await jsonInTurns(answer)).toString('utf8')).toBe(JSON.stringify(answer));
  });

  it('keeps surrogate pairs whole across its chunks (64K characters each)', async () => {
    const answer = { texts: Array.from({ length: 20_000 }, (_, i) => '😀'.repeat(1 + (i % 5)) + (i % 3 ? 'x' : '')) };
    expect((await jsonInTurns(answer)).equals(Buffer.from(JSON.stringify(answer), 'utf8'))).toBe(true);
  });

  it('gives the event loop turns while it serializes a large answer, not one stretch', async () => {
    // 30,000 small events (~6 MB of JSON), as a long session's window.
    const events = Array.from({ length: 30_000 }, (_, i) => ({
      id: `l${i}`,
      type: i % 2 ? 'assistant' : 'user',
      text: `turn ${i} about the invoice and refund number ${(i * 31) % 997}, and what the customer asked next`,
      tokens: 20,
      revision: String(i),
      createdAt: '2026-12-03T20:00:00.000Z',
    }));
    const answer = { sessionId: 'long', revision: '30000', tokens: 600_000, estimator: 'cl100k_base', events };
    // A turn after every millisecond of work: several on any machine, however fast.
    const { result, turns } = await turnsDuring(() => jsonInTurns(answer, 1));
    expect(result.toString('utf8')).toBe(JSON.stringify(answer));
    expect(turns).toBeGreaterThanOrEqual(3);
  });
});

describe('sendJsonBytes', () => {
  const reply = () => {
    const r = { type: jest.fn() };
    r.type.mockReturnValue(r);
    return r;
  };

  it('sends bytes as they are and an answer object as its JSON bytes, both as JSON', async () => {
    const bytes = Buffer.from('{"a":1}');
    const r1 = reply();
    expect(await sendJsonBytes(r1 as unknown as FastifyReply, bytes)).toBe(bytes);
    expect(r1.type).toHaveBeenCalledWith(JSON_CONTENT_TYPE);
    const r2 = reply();
    expect((await sendJsonBytes(r2 as unknown as FastifyReply, { messages: [{ role: 'user', content: 'hé' }] })).toString('utf8')).toBe(
      '{"messages":[{"role":"user","content":"hé"}]}',
    );
    expect(r2.type).toHaveBeenCalledWith(JSON_CONTENT_TYPE);
  });
});
