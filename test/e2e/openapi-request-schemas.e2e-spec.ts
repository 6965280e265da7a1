/**
 * The OpenAPI document's request schemas refuse what the service refuses (newcomer ncopenapifuzz F3,
 * F4): each input below is checked with Ajv (strict mode) against the schema the served document
 * gives for it, as a client or fuzzer generated from the document would, and sent to the same
 * service. A refused input (`limit=0`, a revision past 2^63 − 1, a date-time in year 0000 once in
 * UTC, a compaction id that is no UUID (a UUID in upper case is one: taken), an identity filter
 * sent empty (recall's `sessionId=`, `userId=`, `compactionId=`, the session list's `userId=`), an
 * OpenAI message field the service does not keep, a text past MAX_TEXT_LENGTH, 33 trigger members,
 * an empty name) fails both; a boundary input the service
 * takes (`limit` 1 and its maximum, revision 9223372036854775807, 32 trigger members, a text of
 * MAX_TEXT_LENGTH) passes both. Every parameter and body schema compiles under Ajv's strict mode.
 */
import { OpenApiRequestValidator, type OpenApiRequestDocument } from '../support/openapi-validator';
import { useServedOpenApiDocument } from '../support/served-openapi-document';

jest.setTimeout(60_000);

/** What the service answers a request: its status and error code (none on success). */
type Verdict = { status: number; code?: string };
/** One input: where the document's schema for it is, the value, how to send it, and what the service answers. */
type Case = {
  name: string;
  schema: readonly ['parameter', string, string, string] | readonly ['body', string, string];
  value: unknown;
  send: () => Promise<Verdict>;
  answer: Verdict;
};

const SESSION = 'schema-rules';
const MAX_TEXT = 1_000_000;
const MAX_REVISION = '9223372036854775807';
const PAST_MAX_REVISION = '9223372036854775808';
const leaf = { type: 'turn-count', maxTurns: 5 };

describe('request schemas in the OpenAPI document refuse what the service refuses', () => {
  const served = useServedOpenApiDocument<OpenApiRequestDocument>();
  const harness = served.harness;
  // Each rule on its own (Ajv's strict mode has a test of its own: it refuses a schema, not an input).
  let validator: OpenApiRequestValidator;
  let compactionId: string;

  beforeAll(async () => {
    validator = new OpenApiRequestValidator(served.document(), { strict: false });
    const events = Array.from({ length: 6 }, (_, i) => ({ type: i % 2 ? 'assistant' : 'user', text: `turn ${i}` }));
    await harness.http().post(`/v1/sessions/${SESSION}/events`).send({ events }).expect(201);
    const compaction = await harness
      .http()
      .post(`/v1/sessions/${SESSION}/compactions`)
      .send({ strategy: { type: 'sliding-window', maxEvents: 2 } })
      .expect(200);
    compactionId = (compaction.body as { compactionId: string }).compactionId;
  });

  const verdict = (answer: { status: number; body: unknown }): Verdict => {
    const code = (answer.body as { code?: unknown } | null)?.code;
    return typeof code === 'string' ? { status: answer.status, code } : { status: answer.status };
  };
  const get = (url: string, query: Record<string, string>) => async () => verdict(await harness.http().get(url).query(query));
  const post = (url: string, body: unknown) => async () =>
    verdict(
      await harness
        .http()
        .post(url)
        .send(body as object),
    );
  const put = (url: string, body: unknown) => async () =>
    verdict(
      await harness
        .http()
        .put(url)
        .send(body as object),
    );
  const query = (route: string, name: string, value: string, url = route, extra: Record<string, string> = {}) =>
    ({ schema: ['parameter', 'get', route, name], value, send: get(url, { ...extra, [name]: value }) }) as const;
  const events = (event: Record<string, unknown>, session = SESSION) => {
    const body = { events: [event] };
    return { schema: ['body', 'post', '/v1/sessions/{sessionId}/events'], value: body, send: post(`/v1/sessions/${session}/events`, body) } as const;
  };
  const messages = (message: Record<string, unknown>, session: string) => {
    const body = { messages: [message] };
    return { schema: ['body', 'post', '/v1/sessions/{sessionId}/messages'], value: body, send: post(`/v1/sessions/${session}/messages`, body) } as const;
  };
  const policy = (body: Record<string, unknown>, session: string) =>
    ({ schema: ['body', 'put', '/v1/sessions/{sessionId}/policy'], value: body, send: put(`/v1/sessions/${session}/policy`, body) }) as const;
  const anyOf = (members: number) => ({
    strategy: { type: 'sliding-window' },
    trigger: { type: 'any-of', triggers: Array.from({ length: members }, () => leaf) },
  });
  const invalid = { status: 400, code: 'validation_failed' };

  const refused = (): Case[] => [
    { name: 'limit=0 on the session list', ...query('/v1/sessions', 'limit', '0'), answer: invalid },
    { name: 'limit=999 on the session list', ...query('/v1/sessions', 'limit', '999'), answer: invalid },
    { name: 'limit=101 on recall', ...query('/v1/recall', 'limit', '101', '/v1/recall', { q: 'turn' }), answer: invalid },
    { name: 'limit=1001 on the log', ...query('/v1/sessions/{sessionId}/events', 'limit', '1001', `/v1/sessions/${SESSION}/events`), answer: invalid },
    {
      name: 'fromRevision 2^63',
      ...query('/v1/sessions/{sessionId}/events', 'fromRevision', PAST_MAX_REVISION, `/v1/sessions/${SESSION}/events`),
      answer: invalid,
    },
    { name: 'minPosition of 19 nines', ...query('/v1/sessions', 'minPosition', '9999999999999999999'), answer: invalid },
    // An identity filter sent empty widens nothing: refused by the document (minLength 1) and, since newcomer F2, by the service.
    {
      name: 'recall sessionId=""',
      ...query('/v1/recall', 'sessionId', '', '/v1/recall', { q: 'turn' }),
      answer: { status: 400, code: 'invalid_session_id' },
    },
    { name: 'recall userId=""', ...query('/v1/recall', 'userId', '', '/v1/recall', { q: 'turn' }), answer: invalid },
    { name: 'recall compactionId=""', ...query('/v1/recall', 'compactionId', '', '/v1/recall', { q: 'turn' }), answer: invalid },
    { name: 'session list userId=""', ...query('/v1/sessions', 'userId', ''), answer: invalid },
    {
      name: 'atRevision 2^63',
      ...query('/v1/sessions/{sessionId}/window', 'atRevision', PAST_MAX_REVISION, `/v1/sessions/${SESSION}/window`),
      answer: invalid,
    },
    { name: 'updatedSince in year 0000', ...query('/v1/sessions', 'updatedSince', '0000-06-01T00:00:00Z'), answer: invalid },
    {
      name: 'recall from 0001-01-01 at +14:00 (year 0000 in UTC)',
      ...query('/v1/recall', 'from', '0001-01-01T00:00:00+14:00', '/v1/recall', { q: 'turn' }),
      answer: invalid,
    },
    {
      name: 'a compaction id that is no UUID',
      schema: ['parameter', 'get', '/v1/sessions/{sessionId}/compactions/{compactionId}', 'compactionId'],
      value: 'not-a-compaction',
      send: get(`/v1/sessions/${SESSION}/compactions/not-a-compaction`, {}),
      answer: { status: 404, code: 'compaction_not_found' },
    },
    {
      name: 'an OpenAI message with audio',
      ...messages({ role: 'user', content: 'x', audio: { id: 'a' } }, 'm-audio'),
      answer: { status: 400, code: 'invalid_message' },
    },
    {
      name: 'an OpenAI text part with an unknown field',
      ...messages({ role: 'user', content: [{ type: 'text', text: 'x', cache_control: { type: 'ephemeral' } }] }, 'm-part'),
      answer: { status: 400, code: 'invalid_message' },
    },
    {
      name: 'an OpenAI tool call with an unknown field',
      ...messages(
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' }, index: 0 }] },
        'm-call',
      ),
      answer: { status: 400, code: 'invalid_message' },
    },
    {
      name: 'OpenAI content past MAX_TEXT_LENGTH',
      ...messages({ role: 'user', content: 'x'.repeat(MAX_TEXT + 1) }, 'm-long'),
      answer: { status: 400, code: 'invalid_message' },
    },
    {
      name: 'OpenAI tool call arguments past MAX_TEXT_LENGTH',
      ...messages(
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: 'x'.repeat(MAX_TEXT + 1) } }] },
        'm-args',
      ),
      answer: { status: 400, code: 'invalid_message' },
    },
    {
      name: 'an OpenAI refusal ""',
      ...messages({ role: 'assistant', content: 'x', refusal: '' }, 'm-refusal'),
      answer: { status: 400, code: 'invalid_message' },
    },
    { name: 'an any-of of 33 triggers', ...policy(anyOf(33), 'p-33'), answer: { status: 400, code: 'invalid_parameter' } },
    { name: 'a policy sessionId ""', ...policy({ strategy: null, sessionId: '' }, 'p-empty'), answer: { status: 400, code: 'invalid_parameter' } },
    { name: 'an event name ""', ...events({ type: 'user', text: 'x', name: '' }), answer: invalid },
    { name: 'an assistant refusal ""', ...events({ type: 'assistant', text: 'x', refusal: '' }), answer: invalid },
    { name: 'a tool call name ""', ...events({ type: 'assistant', text: 'x', toolCalls: [{ id: 'c', name: '', arguments: '{}' }] }), answer: invalid },
    { name: 'a summary text ""', ...events({ type: 'summary', shadowPrompt: 'Summary:', text: '' }), answer: invalid },
    // ncapi66 F5: it was rendered as an empty user message, which /messages refuses
    { name: 'a summary shadowPrompt ""', ...events({ type: 'summary', shadowPrompt: '', text: 'Earlier: a recap.' }), answer: invalid },
    { name: 'a createdAt in year 0000 once in UTC', ...events({ type: 'user', text: 'x', createdAt: '0000-12-31T23:59:59-00:00' }), answer: invalid },
    {
      name: 'an expectedRevision of 2^63',
      schema: ['body', 'post', '/v1/sessions/{sessionId}/events'],
      value: { events: [{ type: 'user', text: 'x' }], expectedRevision: PAST_MAX_REVISION },
      send: post(`/v1/sessions/${SESSION}/events`, { events: [{ type: 'user', text: 'x' }], expectedRevision: PAST_MAX_REVISION }),
      answer: invalid,
    },
  ];

  const accepted = (): Case[] => [
    { name: 'limit=1 on the session list', ...query('/v1/sessions', 'limit', '1'), answer: { status: 200 } },
    { name: 'limit=100 on recall', ...query('/v1/recall', 'limit', '100', '/v1/recall', { q: 'turn' }), answer: { status: 200 } },
    { name: 'limit=1000 on the log', ...query('/v1/sessions/{sessionId}/events', 'limit', '1000', `/v1/sessions/${SESSION}/events`), answer: { status: 200 } },
    {
      name: 'fromRevision 2^63 − 1',
      ...query('/v1/sessions/{sessionId}/events', 'fromRevision', MAX_REVISION, `/v1/sessions/${SESSION}/events`),
      answer: { status: 200 },
    },
    {
      name: 'updatedSince 0000-12-31 at −05:00 (year 0001 in UTC)',
      ...query('/v1/sessions', 'updatedSince', '0000-12-31T23:00:00-05:00'),
      answer: { status: 200 },
    },
    {
      name: 'a compaction id as answered',
      schema: ['parameter', 'get', '/v1/sessions/{sessionId}/compactions/{compactionId}', 'compactionId'],
      value: compactionId,
      send: get(`/v1/sessions/${SESSION}/compactions/${compactionId}`, {}),
      answer: { status: 200 },
    },
    // UUIDs are case-insensitive (RFC 9562): an upper-case spelling names the same compaction, as in recall's
    // compactionId filter (newcomer ncaudit56 F3: the routes answered 404 compaction_not_found).
    {
      name: 'a compaction id in upper case',
      schema: ['parameter', 'get', '/v1/sessions/{sessionId}/compactions/{compactionId}', 'compactionId'],
      value: compactionId.toUpperCase(),
      send: get(`/v1/sessions/${SESSION}/compactions/${compactionId.toUpperCase()}`, {}),
      answer: { status: 200 },
    },
    {
      name: 'a compaction id in upper case, its diff',
      schema: ['parameter', 'get', '/v1/sessions/{sessionId}/compactions/{compactionId}/diff', 'compactionId'],
      value: compactionId.toUpperCase(),
      send: get(`/v1/sessions/${SESSION}/compactions/${compactionId.toUpperCase()}/diff`, {}),
      answer: { status: 200 },
    },
    {
      name: 'an OpenAI message with null and empty fields the service does not keep',
      ...messages({ role: 'assistant', content: 'x', audio: null, annotations: [], function_call: null }, 'm-null'),
      answer: { status: 201 },
    },
    { name: 'OpenAI content of MAX_TEXT_LENGTH', ...messages({ role: 'user', content: 'x'.repeat(MAX_TEXT) }, 'm-max'), answer: { status: 201 } },
    { name: 'an any-of of 32 triggers', ...policy(anyOf(32), 'p-32'), answer: { status: 200 } },
    { name: 'a policy sessionId of the path', ...policy({ strategy: null, sessionId: 'p-32' }, 'p-32'), answer: { status: 200 } },
    {
      name: 'a createdAt at the last millisecond',
      ...events({ type: 'user', text: 'x', createdAt: '9999-12-31T23:59:59.999Z' }, 'e-last'),
      answer: { status: 201 },
    },
    {
      name: 'an expectedRevision of 2^63 − 1 (no such revision: a conflict, not a refusal)',
      schema: ['body', 'post', '/v1/sessions/{sessionId}/events'],
      value: { events: [{ type: 'user', text: 'x' }], expectedRevision: MAX_REVISION },
      send: post(`/v1/sessions/${SESSION}/events`, { events: [{ type: 'user', text: 'x' }], expectedRevision: MAX_REVISION }),
      answer: { status: 409, code: 'wrong_expected_revision' },
    },
  ];

  const schemaOf = (c: Case) =>
    c.schema[0] === 'parameter' ? validator.parameter(c.schema[1], c.schema[2], c.schema[3]) : validator.body(c.schema[1], c.schema[2]);

  it('compiles every parameter and request body schema in Ajv strict mode (no maxLength beside an integer-or-string anyOf)', () => {
    expect(new OpenApiRequestValidator(served.document(), { strict: true }).strictProblems()).toEqual([]);
  });

  it('refuses, by the schema and at the service, every input the service refuses', async () => {
    const cases = refused();
    expect(cases.filter((c) => schemaOf(c)(c.value)).map((c) => c.name)).toEqual([]);
    for (const c of cases) expect({ name: c.name, ...(await c.send()) }).toEqual({ name: c.name, ...c.answer });
  });

  it('accepts, by the schema and at the service, the boundary inputs the service takes', async () => {
    for (const c of accepted()) {
      const validate = schemaOf(c);
      const errors = validate(c.value) ? [] : (validate.errors ?? []).slice(0, 3).map((e) => `${e.instancePath} ${e.message}`);
      expect({ name: c.name, errors }).toEqual({ name: c.name, errors: [] });
      expect({ name: c.name, ...(await c.send()) }).toEqual({ name: c.name, ...c.answer });
    }
  });

  it('takes integer query parameters as numbers within the same range', () => {
    const limit = validator.parameter('get', '/v1/sessions', 'limit');
    expect([0, 1, 100, 101].map((n) => limit(n))).toEqual([false, true, true, false]);
  });

  it('states the nesting limit of triggers, which a recursive schema cannot count', () => {
    const trigger = served.document().components.schemas.Trigger as { description?: string };
    expect(trigger.description).toMatch(/nest at most 8 levels deep/);
  });
});
