/**
 * What goes in comes out (issue 17 item 4), through the HTTP API, as properties:
 *
 * - OpenAI chat messages appended with `POST …/messages`, read back with
 *   `GET …/window?format=openai` (no compaction), are the same messages: names, text parts,
 *   refusals and tool message names included.
 * - Native events appended with `POST …/events` come back unchanged from the window
 *   (`format=events`) and from the log; their `metadata` byte for byte (a `__proto__` key
 *   included) and their `createdAt`.
 */
import fc from 'fast-check';
import { showsNothing } from '@lib/compaction';
import { useService } from '../support/service-harness';

const RUNS = 25;

/** Well-formed text (no lone surrogates) that shows something: user, system and summary text that shows nothing is refused. */
const text = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }).filter((t) => !showsNothing(t));
const name = fc.oneof(fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/), text);
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const partsOf = fc.array(text, { minLength: 1, maxLength: 3 });

// ---- OpenAI messages -------------------------------------------------------------------------

const content = fc.oneof(
  text,
  partsOf.map((parts) => parts.map((t) => ({ type: 'text', text: t }))),
);
const withName = <T extends object>(m: T, n: string | undefined) => (n === undefined ? m : { ...m, name: n });

const userMessage = fc.tuple(content, maybe(name)).map(([c, n]) => [withName({ role: 'user', content: c }, n)]);
const assistantText = fc
  .tuple(content, maybe(name), maybe(text))
  .map(([c, n, refusal]) => [withName({ role: 'assistant', content: c, ...(refusal ? { refusal } : {}) }, n)]);
const assistantRefusal = fc.tuple(text, maybe(name)).map(([refusal, n]) => [withName({ role: 'assistant', content: null, refusal }, n)]);
/** An assistant message with calls, then one tool message per call in call order. Ids are fixed up later. */
const assistantCalls = fc
  .tuple(
    fc.option(content, { nil: null }),
    maybe(name),
    fc.array(fc.tuple(fc.stringMatching(/^[a-z_]{1,10}$/), fc.string({ maxLength: 20 }), content, maybe(fc.stringMatching(/^[a-z_]{1,10}$/))), {
      minLength: 1,
      maxLength: 3,
    }),
  )
  .map(([c, n, calls]) => [
    withName(
      { role: 'assistant', content: c, tool_calls: calls.map(([fn, args]) => ({ id: '', type: 'function', function: { name: fn, arguments: args } })) },
      n,
    ),
    ...calls.map(([, , answer, toolName]) => withName({ role: 'tool', tool_call_id: '', content: answer }, toolName)),
  ]);

type Message = Record<string, unknown>;

const conversation = fc
  .tuple(maybe(fc.tuple(content, maybe(name))), userMessage, fc.array(fc.oneof(userMessage, assistantText, assistantRefusal, assistantCalls), { maxLength: 6 }))
  .map(([system, first, blocks]) => {
    const messages: Message[] = [...(system ? [withName({ role: 'system', content: system[0] }, system[1])] : []), ...first, ...blocks.flat()];
    // Unique call ids, each tool message answering the next call of the assistant message before it.
    let k = 0;
    const pending: string[] = [];
    for (const m of messages) {
      if (Array.isArray(m.tool_calls)) for (const call of m.tool_calls as Message[]) pending.push((call.id = `call_${k++}`));
      if (m.role === 'tool') m.tool_call_id = pending.shift();
    }
    return messages;
  });

// ---- native events ---------------------------------------------------------------------------

/** Text with its parts (the text is the parts concatenated), or a plain text. */
const nativeText: fc.Arbitrary<{ text: string; textParts?: string[] }> = fc.oneof(
  text.map((t) => ({ text: t })),
  partsOf.map((parts) => ({ text: parts.join(''), textParts: parts })),
);
const asSent = (t: { text: string; textParts?: string[] }, n: string | undefined) => ({ ...t, ...(n === undefined ? {} : { name: n }) });

/** True when every number in the JSON value is finite and, when an integer, within ±(2^53 − 1): what metadata keeps (others are refused). */
const keptNumbers = (value: unknown): boolean =>
  typeof value === 'number'
    ? Number.isFinite(value) && (Number.isSafeInteger(value) || !Number.isInteger(value))
    : value !== null && typeof value === 'object'
      ? Object.values(value).every(keptNumbers)
      : true;

/** A metadata object as JSON text, with keys a naive copy would lose (`__proto__`) or confuse. */
const metadataJson = fc
  .uniqueArray(
    fc.tuple(
      fc.oneof(fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty'), fc.string({ maxLength: 8 })),
      fc.oneof(fc.jsonValue({ maxDepth: 3 }).filter(keptNumbers), fc.constant(JSON.parse('{"__proto__":1}') as unknown)),
    ),
    {
      maxLength: 5,
      selector: ([key]) => key,
    },
  )
  .map((entries) => `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`).join(',')}}`);

const extras = fc.record({
  metadata: maybe(metadataJson),
  createdAt: maybe(fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString())),
});

const nativeBlock = fc.oneof(
  fc
    // User and system events need text (null is refused: it would come back as content "").
    .tuple(fc.constantFrom('user', 'system'), nativeText, maybe(name))
    .map(([type, t, n]) => [{ type, ...asSent(t, n) }]),
  fc.tuple(nativeText, maybe(name), maybe(text)).map(([t, n, refusal]) => [{ type: 'assistant', ...asSent(t, n), ...(refusal ? { refusal } : {}) }]),
  fc.tuple(text, text).map(([shadowPrompt, t]) => [{ type: 'summary', shadowPrompt, text: t }]),
  fc
    .tuple(
      fc.option(nativeText, { nil: null }),
      fc.array(fc.tuple(fc.stringMatching(/^[a-z_]{1,10}$/), fc.string({ maxLength: 20 }), nativeText), { minLength: 1, maxLength: 3 }),
      maybe(name),
    )
    .map(([t, calls, toolName]) => [
      { type: 'assistant', ...(t === null ? { text: null } : t), toolCalls: calls.map(([fn, args]) => ({ id: '', name: fn, arguments: args })) },
      {
        type: 'tool',
        ...(toolName ? { name: toolName } : {}),
        responses: calls.map(([fn, , answer]) => ({
          toolCallId: '',
          name: fn,
          data: answer.text,
          ...(answer.textParts ? { dataParts: answer.textParts } : {}),
        })),
      },
    ]),
);

const nativeConversation = fc.array(fc.tuple(nativeBlock, fc.array(extras, { minLength: 2, maxLength: 2 })), { minLength: 1, maxLength: 6 }).map((blocks) => {
  let k = 0;
  let e = 0;
  const events: Message[] = [];
  const metadataOf = new Map<string, string>();
  for (const [block, blockExtras] of blocks) {
    const calls: Message[] = [];
    block.forEach((event: Message, i) => {
      const id = `e${e++}`;
      if (Array.isArray(event.toolCalls)) for (const c of event.toolCalls as Message[]) calls.push(Object.assign(c, { id: `call_${k++}` }));
      if (Array.isArray(event.responses)) (event.responses as Message[]).forEach((r, j) => (r.toolCallId = calls[j].id));
      const { metadata, createdAt } = blockExtras[i];
      if (metadata !== undefined) metadataOf.set(id, metadata);
      events.push({ id, ...event, ...(createdAt ? { createdAt } : {}) });
    });
  }
  return { events, metadataOf };
});

/** The request body: events as JSON, with each event's metadata spliced in as its exact JSON text. */
function eventsBody(events: Message[], metadataOf: Map<string, string>): string {
  const items = events.map((event) => {
    const json = JSON.stringify(event);
    const metadata = metadataOf.get(event.id as string);
    return metadata === undefined ? json : `${json.slice(0, -1)},"metadata":${metadata}}`;
  });
  return `{"events":[${items.join(',')}]}`;
}

describe('what goes in comes out (HTTP)', () => {
  const harness = useService();

  /** The log's entries at `path`, parsed with JSON.parse from the raw body: it keeps a `__proto__` key as an own property (superagent's parser may not). */
  const logEntries = async (path: string): Promise<Array<{ data: unknown }>> => {
    const log = await harness
      .http()
      .get(path)
      .buffer(true)
      .parse((res, done) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => done(null, body));
      });
    return (JSON.parse(log.body) as { events: Array<{ data: unknown }> }).events;
  };
  let n = 0;

  it('OpenAI messages appended, then read with format=openai, are the same messages', async () => {
    await fc.assert(
      fc.asyncProperty(conversation, async (messages) => {
        const session = `/v1/sessions/openai-${n++}`;
        const appended = await harness.http().post(`${session}/messages`).send({ messages });
        expect(appended.status).toBe(201);
        const read = await harness.http().get(`${session}/window?format=openai&minPosition=${appended.body.position}`).expect(200);
        expect(read.body.messages).toEqual(messages);
      }),
      { numRuns: RUNS },
    );
  });

  it('examples from the issue: text parts, name, refusal', async () => {
    const messages = [
      { role: 'system', content: 'be brief', name: 'ops' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'hello ' },
          { type: 'text', text: 'world' },
        ],
        name: 'alice',
      },
      { role: 'assistant', content: null, refusal: 'I cannot help with that.' },
    ];
    const appended = await harness.http().post('/v1/sessions/issue-examples/messages').send({ messages }).expect(201);
    const window = await harness.http().get(`/v1/sessions/issue-examples/window?minPosition=${appended.body.position}`).expect(200);
    // the native view: the text is the parts concatenated (no separator), the parts kept
    expect(window.body.events[1]).toMatchObject({ type: 'user', text: 'hello world', textParts: ['hello ', 'world'], name: 'alice' });
    expect(window.body.events[2]).toMatchObject({ type: 'assistant', text: null, refusal: 'I cannot help with that.' });
    const openai = await harness.http().get('/v1/sessions/issue-examples/window?format=openai').expect(200);
    expect(openai.body.messages).toEqual(messages);
  });

  it('a notice (a system message named "notice", DESIGN §3.1) keeps its name', async () => {
    const messages = [
      { role: 'system', content: 'You are a travel agent.' },
      { role: 'user', content: 'hi' },
      { role: 'system', content: 'A file arrived: plan.pdf', name: 'notice' },
    ];
    const appended = await harness.http().post('/v1/sessions/notice/messages').send({ messages }).expect(201);
    const window = await harness.http().get(`/v1/sessions/notice/window?format=openai&minPosition=${appended.body.position}`).expect(200);
    const notices = (window.body.messages as Message[]).filter((m) => m.content === 'A file arrived: plan.pdf');
    expect(notices).toEqual([{ role: 'system', content: 'A file arrived: plan.pdf', name: 'notice' }]);
  });

  it('native events come back unchanged from the window and the log, metadata byte for byte', async () => {
    await fc.assert(
      fc.asyncProperty(nativeConversation, async ({ events, metadataOf }) => {
        const session = `/v1/sessions/native-${n++}`;
        const appended = await harness.http().post(`${session}/events`).set('content-type', 'application/json').send(eventsBody(events, metadataOf));
        expect(appended.status).toBe(201);
        const window = await harness.http().get(`${session}/window?minPosition=${appended.body.position}`).expect(200);
        const strip = ({ tokens: _t, revision: _r, createdAt: _c, compactionId: _k, ...event }: Message) => event;
        const sent = events.map(({ createdAt: _c, ...event }) => event);
        expect(window.body.events.map(strip)).toEqual(sent);
        const entries = (await logEntries(`${session}/events`)).map((e) => e.data as Message);
        expect(entries.map((d) => d.event)).toEqual(sent);
        for (const [i, event] of events.entries()) {
          // Byte for byte as JSON.parse reads it: JavaScript objects list integer-like keys first.
          const sentMetadata = metadataOf.get(event.id as string);
          const metadata = sentMetadata === undefined ? undefined : JSON.stringify(JSON.parse(sentMetadata));
          expect({ id: event.id, metadata: entries[i].metadata === undefined ? undefined : JSON.stringify(entries[i].metadata) }).toEqual({
            id: event.id,
            metadata,
          });
          expect(entries[i].createdAt).toBe(event.createdAt);
        }
      }),
      { numRuns: RUNS },
    );
  });

  // Newcomer: "refusal": null on /events answered 400 while /messages counts null fields as absent.
  it('native events with every absent optional field sent as null are stored byte for byte as without them', async () => {
    const OPTIONAL: Record<string, string[]> = {
      user: ['name', 'textParts', 'createdAt', 'metadata'],
      system: ['name', 'textParts', 'notice', 'createdAt', 'metadata'],
      assistant: ['name', 'textParts', 'toolCalls', 'refusal', 'createdAt', 'metadata'],
      tool: ['name', 'createdAt', 'metadata'],
      summary: ['createdAt', 'metadata'],
    };
    const withNulls = (events: Message[], metadataOf: Map<string, string>) =>
      events.map((event) => {
        const nulls = OPTIONAL[event.type as string].filter((f) => !(f in event) && !(f === 'metadata' && metadataOf.has(event.id as string)));
        const responses = Array.isArray(event.responses) ? { responses: (event.responses as Message[]).map((r) => ({ dataParts: null, ...r })) } : {};
        return { ...event, ...responses, ...Object.fromEntries(nulls.map((f) => [f, null])) };
      });
    const logData = async (session: string, position: string) =>
      (await logEntries(`${session}/events?minPosition=${position}`)).map((e) => JSON.stringify(e.data));
    await fc.assert(
      fc.asyncProperty(nativeConversation, async ({ events, metadataOf }) => {
        const plain = `/v1/sessions/null-fields-${n}`;
        const nulled = `/v1/sessions/null-fields-${n++}-nulls`;
        const a = await harness.http().post(`${plain}/events`).set('content-type', 'application/json').send(eventsBody(events, metadataOf));
        const b = await harness
          .http()
          .post(`${nulled}/events`)
          .set('content-type', 'application/json')
          .send(eventsBody(withNulls(events, metadataOf), metadataOf));
        expect([a.status, b.status]).toEqual([201, 201]);
        const stored = await logData(nulled, b.body.position);
        expect(stored).toEqual(await logData(plain, a.body.position));
        // and no null was stored for a field left out (only an assistant's text may be null)
        for (const data of stored.map((d) => JSON.parse(d) as { event: Message; metadata?: unknown; createdAt?: unknown })) {
          const nulls = Object.entries(data.event).filter(([k, v]) => v === null && k !== 'text');
          const nullDataParts = ((data.event.responses as Message[] | undefined) ?? []).some((r) => r.dataParts === null);
          expect({ nulls, nullDataParts, metadata: data.metadata === null, createdAt: data.createdAt === null }).toEqual({
            nulls: [],
            nullDataParts: false,
            metadata: false,
            createdAt: false,
          });
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('tool-call arguments that are not JSON (models emit them; a reply cut by max_tokens ends mid-object) are kept verbatim and costed as sent', async () => {
    const args = ['{"flight": "HAT2', '', 'city=Paris', '{"a":1} trailing', '[1, 2'];
    const calls = args.map((a, i) => ({ id: `call_${i}`, type: 'function', function: { name: 'lookup', arguments: a } }));
    const messages = [
      { role: 'user', content: 'Book it.' },
      { role: 'assistant', content: null, tool_calls: calls },
      ...calls.map((c) => ({ role: 'tool', tool_call_id: c.id, content: 'error: arguments are not JSON' })),
    ];
    const appended = await harness.http().post('/v1/sessions/raw-args/messages').send({ messages }).expect(201);
    const openai = await harness.http().get(`/v1/sessions/raw-args/window?format=openai&minPosition=${appended.body.position}`).expect(200);
    expect(openai.body.messages).toEqual(messages);

    const native = { id: 'c1', type: 'assistant', text: null, toolCalls: [{ id: 'k1', name: 'lookup', arguments: 'city=Paris' }] };
    const sent = await harness
      .http()
      .post('/v1/sessions/raw-args-native/events')
      .send({ events: [{ id: 'u1', type: 'user', text: 'Weather?' }, native] })
      .expect(201);
    const window = await harness.http().get(`/v1/sessions/raw-args-native/window?estimator=chars&minPosition=${sent.body.position}`).expect(200);
    expect(window.body.events[1]).toMatchObject({ toolCalls: native.toolCalls });
    // DESIGN §3.1: the formatted line holds the raw argument string
    expect(window.body.events[1].tokens).toBe('Assistant [tool calls: lookup(city=Paris)]'.length);
  });

  // ncimport F1: `tool_calls: []` was accepted and silently dropped (log and window), while /events kept `toolCalls: []`
  // and a resend of the same message through the other route answered 409 duplicate_event_id.
  it('an empty tool_calls list is kept in the log and the native window, left out of format=openai (OpenAI refuses it), and is the same event on both routes', async () => {
    const messages = [
      { id: 'u', role: 'user', content: 'hi' },
      { id: 'a', role: 'assistant', content: 'hello', tool_calls: [] },
    ];
    const appended = await harness.http().post('/v1/sessions/empty-calls/messages').send({ messages }).expect(201);
    const log = await harness.http().get(`/v1/sessions/empty-calls/events?minPosition=${appended.body.position}`).expect(200);
    expect(log.body.events[1].data.event).toEqual({ id: 'a', type: 'assistant', text: 'hello', toolCalls: [] });
    const window = await harness.http().get('/v1/sessions/empty-calls/window').expect(200);
    expect(window.body.events[1]).toMatchObject({ type: 'assistant', text: 'hello', toolCalls: [] });
    const openai = await harness.http().get('/v1/sessions/empty-calls/window?format=openai').expect(200);
    expect(openai.body.messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ]);
    // The same message through /events, with the empty list or without it, and through /messages again: retries.
    const native = [
      { id: 'u', type: 'user', text: 'hi' },
      { id: 'a', type: 'assistant', text: 'hello', toolCalls: [] },
    ];
    const answer = { revision: appended.body.revision, position: appended.body.position };
    expect((await harness.http().post('/v1/sessions/empty-calls/events').send({ events: native }).expect(201)).body).toEqual(answer);
    expect(
      (
        await harness
          .http()
          .post('/v1/sessions/empty-calls/events')
          .send({ events: [native[0], { id: 'a', type: 'assistant', text: 'hello' }] })
          .expect(201)
      ).body,
    ).toEqual(answer);
    expect((await harness.http().post('/v1/sessions/empty-calls/messages').send({ messages }).expect(201)).body).toEqual(answer);
    // A message stored without the list (as builds before this one stored `tool_calls: []`), resent with it: a retry.
    const earlier = await harness
      .http()
      .post('/v1/sessions/empty-calls-earlier/events')
      .send({ events: [native[0], { id: 'a', type: 'assistant', text: 'hello' }] })
      .expect(201);
    expect((await harness.http().post('/v1/sessions/empty-calls-earlier/messages').send({ messages }).expect(201)).body).toEqual(earlier.body);
  });

  // Some OpenAI-compatible frameworks send `content: []` beside tool_calls; it was refused ("textParts: must hold at least one part").
  it('an assistant content [] beside tool_calls is no text: stored and answered as text null (content null), the same event as content null', async () => {
    const call = { id: 'k1', type: 'function', function: { name: 'lookup', arguments: '{}' } };
    const messages = [
      { id: 'u', role: 'user', content: 'find it' },
      { id: 'a', role: 'assistant', content: [], tool_calls: [call] },
      { id: 't', role: 'tool', tool_call_id: 'k1', content: 'found' },
    ];
    const appended = await harness.http().post('/v1/sessions/empty-parts/messages').send({ messages }).expect(201);
    const log = await harness.http().get(`/v1/sessions/empty-parts/events?minPosition=${appended.body.position}`).expect(200);
    expect(log.body.events[1].data.event).toEqual({ id: 'a', type: 'assistant', text: null, toolCalls: [{ id: 'k1', name: 'lookup', arguments: '{}' }] });
    const window = await harness.http().get('/v1/sessions/empty-parts/window').expect(200);
    expect(window.body.events[1]).toMatchObject({ type: 'assistant', text: null });
    expect(window.body.events[1]).not.toHaveProperty('textParts');
    const openai = await harness.http().get('/v1/sessions/empty-parts/window?format=openai').expect(200);
    expect(openai.body.messages[1]).toEqual({ role: 'assistant', content: null, tool_calls: [call] });
    // The same message with content null: a retry.
    const resent = [messages[0], { ...messages[1], content: null }, messages[2]];
    const answer = { revision: appended.body.revision, position: appended.body.position };
    expect((await harness.http().post('/v1/sessions/empty-parts/messages').send({ messages: resent }).expect(201)).body).toEqual(answer);
  });

  it('a __proto__ metadata key is stored verbatim', async () => {
    const body = '{"events":[{"id":"m1","type":"user","text":"hi","metadata":{"__proto__":{"admin":true},"b":[1,{"__proto__":null}]}}]}';
    await harness.http().post('/v1/sessions/proto/events').set('content-type', 'application/json').send(body).expect(201);
    const log = await harness
      .http()
      .get('/v1/sessions/proto/events')
      .buffer(true)
      .parse((res, done) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => done(null, text));
      });
    expect(log.text ?? (log.body as unknown as string)).toContain('"metadata":{"__proto__":{"admin":true},"b":[1,{"__proto__":null}]}');
  });
});
