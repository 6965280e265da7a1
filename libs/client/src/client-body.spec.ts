/**
 * A JSON request body's optional member given `undefined` (the types accept it at every depth,
 * `ClientPaths`) is sent absent: openapi-fetch's serializer, `JSON.stringify`, leaves it out, so the
 * service sees the field missing, never `null` or `undefined` text.
 */
import { createSessionServiceClient } from './index';

/** A client whose requests are recorded (method, path and body text) and answered 200 `{}` without a network. */
function recordingClient() {
  const sent: Array<{ method: string; path: string; body: string }> = [];
  const client = createSessionServiceClient('http://service.test', {
    fetch: async (request: Request) => {
      sent.push({ method: request.method, path: new URL(request.url).pathname, body: await request.text() });
      return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
    },
  });
  return { client, sent };
}

describe('typed client request bodies', () => {
  const path = { sessionId: 's1' };

  it('leaves out an optional member given undefined, at the top level and inside a strategy', async () => {
    const { client, sent } = recordingClient();
    const maybeFlag = undefined as boolean | undefined;
    await client.POST('/v1/sessions/{sessionId}/compactions', {
      params: { path },
      body: { strategy: { type: 'sliding-window', maxEvents: undefined }, dryRun: maybeFlag, estimator: undefined, trigger: undefined },
    });
    expect(sent).toEqual([{ method: 'POST', path: '/v1/sessions/s1/compactions', body: '{"strategy":{"type":"sliding-window"}}' }]);
  });

  it("leaves out an event's undefined optional fields, in each item, and keeps null and the given values", async () => {
    const { client, sent } = recordingClient();
    await client.POST('/v1/sessions/{sessionId}/events', {
      params: { path },
      body: {
        events: [
          { id: 'u1', type: 'user', text: 'hi', createdAt: undefined, metadata: undefined },
          { id: undefined, type: 'assistant', text: null, toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{}' }], refusal: undefined },
        ],
        expectedRevision: undefined,
      },
    });
    expect(JSON.parse(sent[0].body)).toStrictEqual({
      events: [
        { id: 'u1', type: 'user', text: 'hi' },
        { type: 'assistant', text: null, toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{}' }] },
      ],
    });
    expect(sent[0].body).not.toMatch(/createdAt|metadata|refusal|expectedRevision|"id":null/);
  });

  const NON_FINITE =
    'a number that is not finite (NaN, Infinity or -Infinity) cannot be sent in JSON (it would arrive as null); send a finite number, or leave the member out';
  it.each<[string, unknown, string, string]>([
    ['NaN in metadata', { events: [{ id: 'e1', type: 'user', text: 'x', metadata: { score: Number.NaN } }] }, 'body.events[0].metadata.score', NON_FINITE],
    ['Infinity in an array', { events: [{ id: 'e1', type: 'user', text: 'x', metadata: { v: [1, Infinity] } }] }, 'body.events[0].metadata.v[1]', NON_FINITE],
    [
      '-Infinity under a key that is not a name',
      { events: [{ id: 'e1', type: 'user', text: 'x', metadata: { 'a b': -Infinity } }] },
      'body.events[0].metadata["a b"]',
      NON_FINITE,
    ],
    // newcomer ncverify71 F8: still sent as null, or a stack overflow
    ['a boxed NaN', { events: [{ id: 'e1', type: 'user', text: 'x', metadata: { n: new Number(Number.NaN) } }] }, 'body.events[0].metadata.n', NON_FINITE],
    [
      'an invalid Date',
      { events: [{ id: 'e1', type: 'user', text: 'x', createdAt: new Date('nope') }] },
      'body.events[0].createdAt',
      'an invalid Date cannot be sent in JSON (it would arrive as null); send a valid Date, or leave the member out',
    ],
    // newcomer ncapi73 F2: the cycle was explained as a number that is not finite
    [
      'an object that contains itself',
      (() => {
        const m: Record<string, unknown> = {};
        m.self = m;
        return { events: [{ id: 'e1', type: 'user', text: 'x', metadata: m }] };
      })(),
      'body.events[0].metadata.self',
      'an object that contains itself cannot be sent in JSON; send a copy without the cycle',
    ],
    // newcomer ncapi73 F3: sent as [1,null,3] and stored so
    ...[
      ['undefined', [1, undefined, 3]],
      ['a function', [1, () => 2, 3]],
      ['a symbol', [1, Symbol('s'), 3]],
      // eslint-disable-next-line no-sparse-arrays
      ['a hole', [1, , 3]],
    ].map(([what, items]): [string, unknown, string, string] => [
      `${what as string} as an array item`,
      { events: [{ id: 'e1', type: 'user', text: 'x', metadata: { a: items } }] },
      'body.events[0].metadata.a[1]',
      'an array item that is undefined, a function or a symbol cannot be sent in JSON (it would arrive as null); send null or a value, or remove the item',
    ]),
    // newcomer ncrecheck73 F4: a BigInt threw without naming it; the others were sent changed
    [
      'a BigInt',
      { events: [{ id: 'e1', type: 'user', text: 'x', metadata: { n: 10n } }] },
      'body.events[0].metadata.n',
      'a BigInt cannot be sent in JSON (JSON.stringify throws); send it as a number or as text',
    ],
    [
      'a Map',
      { events: [{ id: 'e1', type: 'user', text: 'x', metadata: { m: new Map([['a', 1]]) } }] },
      'body.events[0].metadata.m',
      'a Map cannot be sent in JSON (it would arrive as {}, its contents lost); send Object.fromEntries(map), or an array of its entries',
    ],
    [
      'a Set',
      { events: [{ id: 'e1', type: 'user', text: 'x', metadata: { s: new Set([1]) } }] },
      'body.events[0].metadata.s',
      'a Set cannot be sent in JSON (it would arrive as {}, its contents lost); send Array.from(set)',
    ],
    [
      'a typed array',
      { events: [{ id: 'e1', type: 'user', text: 'x', metadata: { t: new Float64Array([1, 2]) } }] },
      'body.events[0].metadata.t',
      'a Float64Array cannot be sent in JSON as an array (it would arrive as an object keyed "0", "1", …); send Array.from(it)',
    ],
    [
      'an array item whose toJSON answers undefined',
      { events: [{ id: 'e1', type: 'user', text: 'x', metadata: { a: [1, { toJSON: () => undefined }] } }] },
      'body.events[0].metadata.a[1]',
      'an array item that is undefined, a function or a symbol cannot be sent in JSON (it would arrive as null); send null or a value, or remove the item',
    ],
    [
      'an invalid Date as an array item',
      { events: [{ id: 'e1', type: 'user', text: 'x', metadata: { a: [new Date('nope')] } }] },
      'body.events[0].metadata.a[0]',
      'an invalid Date cannot be sent in JSON (it would arrive as null); send a valid Date, or leave the member out',
    ],
  ])(
    'refuses %s with a TypeError naming the member and saying what to send, sending nothing (newcomer ncapi71 F3: it was sent as null and stored)',
    async (_kind, body, at, problem) => {
      const { client, sent } = recordingClient();
      await expect(client.POST('/v1/sessions/{sessionId}/events', { params: { path }, body: body as never })).rejects.toThrow(
        new TypeError(`${at}: ${problem}`),
      );
      expect(sent).toHaveLength(0);
    },
  );

  it('sends a Buffer as its toJSON writes it, and an array item whose toJSON answers a value as that value', async () => {
    const { client, sent } = recordingClient();
    const body = { events: [{ id: 'e1', type: 'user' as const, text: 'x', metadata: { b: Buffer.from('hi'), a: [{ toJSON: () => 'v' }] } }] };
    await client.POST('/v1/sessions/{sessionId}/events', { params: { path }, body: body as never });
    expect(sent[0].body).toBe(JSON.stringify(body));
  });

  it('sends an optional member given undefined, a function or a symbol as absent, as JSON.stringify leaves it out', async () => {
    const { client, sent } = recordingClient();
    const body = { events: [{ id: 'e1', type: 'user' as const, text: 'x', metadata: { gone: undefined, f: () => 1, s: Symbol('s'), kept: [null] } }] };
    await client.POST('/v1/sessions/{sessionId}/events', { params: { path }, body: body as never });
    expect(JSON.parse(sent[0].body)).toStrictEqual({ events: [{ id: 'e1', type: 'user', text: 'x', metadata: { kept: [null] } }] });
  });

  it('sends finite numbers, dates (as their JSON text) and nulls as JSON.stringify writes them', async () => {
    const { client, sent } = recordingClient();
    const body = { events: [{ id: 'e1', type: 'user' as const, text: 'x', metadata: { n: 1.5, at: new Date(0), none: null, neg: -0 } }] };
    await client.POST('/v1/sessions/{sessionId}/events', { params: { path }, body });
    expect(sent[0].body).toBe(JSON.stringify(body));
  });
});
