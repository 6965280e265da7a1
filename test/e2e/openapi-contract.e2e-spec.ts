/**
 * The OpenAPI document is the contract (issue 17 item 7, issue 13): the committed client types in
 * `libs/client` are exactly what openapi-typescript generates from the running service's document
 * (regenerate with `npm run client:generate` when this fails); every route declares a typed answer
 * and its error answers, each error status with the codes it may carry, and every code the service
 * can answer is declared; and the real answers of every route (a fixture with every optional field
 * of every event and message, and real τ-bench conversations when the shared folder is there) match
 * what the document declares for them, checked by Ajv against the served document and by the zod
 * schemas it is generated from (strict: an undeclared field fails). Runs in about 30 s (10 s without the shared folder).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { z } from 'zod';
import { createSessionServiceClient, TIME_QUERY_PARAMETERS, type Schemas, type SessionServiceClient } from '@lib/client';
import { CLIENT_TYPES_FILE, clientTypesSource } from '../../libs/client/scripts/client-types';
import * as schemas from '../../apps/session-service/src/http/response-schemas';
import { ALL_ERROR_CODES, API_ERROR_CODES, type ApiErrorCode } from '../../apps/session-service/src/http/error-codes';
import { startListeningService, type ClientHarness } from '../support/client-harness';
import { OpenApiAnswerValidator, type OpenApiDocument } from '../support/openapi-validator';
import { describeWithShared, TAU_BENCH_FILE } from '../support/shared-dir';
import { documentationFile } from '../support/documentation';

type CodeVariant = { properties?: { code?: { enum?: string[] } }; required?: string[] };
type ErrorAnswerSchema = { allOf?: Array<{ $ref?: string; oneOf?: CodeVariant[] } & CodeVariant> };
type Operation = {
  parameters?: Array<{ in: string; name: string; schema?: Record<string, unknown> }>;
  requestBody?: unknown;
  responses: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }> }>;
};

/** The codes an operation declares for `status` (the enum of its error schema), or undefined when the status is not declared. */
function declaredCodes(op: Operation, status: string): string[] | undefined {
  const schema = op.responses[status]?.content?.['application/json']?.schema as ErrorAnswerSchema | undefined;
  if (!schema) return undefined;
  return schema.allOf?.flatMap((part) => [part, ...(part.oneOf ?? [])]).flatMap((part) => part.properties?.code?.enum ?? []) ?? [];
}

/**
 * The error codes written in the service's source (`code: '…'`, `code = '…'`, the NATS errors'
 * first argument, the domain's code unions), whatever their type: what the server can answer, found
 * where codes are defined, so a code added without declaring it (e.g. sent by a hook without the
 * `ApiErrorBody` type) shows here.
 */
function codesInSource(): Map<string, string> {
  const roots = ['apps/session-service/src', 'libs/session/src', 'libs/compaction/src', 'libs/event-store/src'].map((d) => path.join(__dirname, '..', '..', d));
  const found = new Map<string, string>();
  const patterns = [
    // `code: '…'` in an error body, `readonly code = '…'` in an error class (not a zod issue's `addIssue({ code: 'custom' })`, on one line or several).
    /(?<!addIssue\(\{\s*)\bcode(?::| =)\s*'([a-z][a-z0-9_]*)'/g,
    /NatsCommandError\(\s*'([a-z][a-z0-9_]*)'/g,
    /malformedBody\(\s*'([a-z][a-z0-9_]*)'/g,
  ];
  // The members of the domain's code unions (`SessionErrorCode`, `InvalidRequestCode`), in its errors modules.
  const unionMember = /^\s*\| '([a-z][a-z0-9_]*)'/gm;
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (/\.ts$/.test(entry.name) && !/\.spec\.ts$/.test(entry.name)) {
        const text = fs.readFileSync(file, 'utf8');
        // Only files that build error answers or define error codes.
        if (!/Error|code/.test(text)) continue;
        for (const pattern of [...patterns, ...(/errors\.ts$/.test(entry.name) ? [unionMember] : [])])
          for (const match of text.matchAll(pattern)) if (!found.has(match[1])) found.set(match[1], path.relative(process.cwd(), file));
      }
    }
  };
  for (const root of roots) if (fs.existsSync(root)) walk(root);
  return found;
}

describe('OpenAPI contract', () => {
  let harness: ClientHarness;
  let validator: OpenApiAnswerValidator;
  let client: SessionServiceClient;
  let document: OpenApiDocument & { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown> } };

  beforeAll(async () => {
    harness = await startListeningService();
    document = (await (await fetch(`${harness.baseUrl}/docs/openapi.json`)).json()) as typeof document;
    validator = new OpenApiAnswerValidator(document);
    // Every answer the typed client gets in these tests is checked against the document.
    client = createSessionServiceClient(harness.baseUrl, { fetch: validator.fetch });
  });
  afterAll(() => harness?.stop());

  const operations = () =>
    Object.entries(document.paths).flatMap(([route, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ name: `${method.toUpperCase()} ${route}`, route, op })),
    );

  it('has committed client types generated from this document (run `npm run client:generate` after changing a route)', async () => {
    const expected = clientTypesSource(document as unknown as Record<string, unknown>);
    const committed = fs.readFileSync(CLIENT_TYPES_FILE, 'utf8');
    if (committed !== expected) {
      const a = committed.split('\n');
      const b = expected.split('\n');
      const line = a.findIndex((l, i) => l !== b[i]);
      throw new Error(
        `libs/client/src/openapi-types.ts is out of date at line ${line + 1} (committed: ${JSON.stringify(a[line])}, generated: ${JSON.stringify(b[line])}): run npm run client:generate`,
      );
    }
  });

  it('declares a typed answer and the error answers of every route, and a type for every query parameter', () => {
    expect(operations().length).toBeGreaterThanOrEqual(16);
    for (const { name, route, op } of operations()) {
      const success = Object.entries(op.responses).filter(([status]) => /^2/.test(status));
      expect([name, success.length]).toEqual([name, 1]);
      const [, answer] = success[0];
      const schema = answer.content?.['application/json']?.schema ?? answer.content?.['text/plain']?.schema;
      expect([name, schema && Object.keys(schema).length > 0]).toEqual([name, true]);
      for (const [status, response] of Object.entries(op.responses).filter(([s]) => !/^2/.test(s))) {
        const errorSchema = response.content?.['application/json']?.schema as ErrorAnswerSchema;
        expect([name, status, errorSchema?.allOf?.[0]]).toEqual([name, status, { $ref: '#/components/schemas/Error' }]);
        expect([name, status, (declaredCodes(op, status)?.length ?? 0) > 0]).toEqual([name, status, true]);
      }
      if (route.startsWith('/v1/'))
        for (const status of ['400', '401', '429']) expect([name, status, Array.isArray(declaredCodes(op, status))]).toEqual([name, status, true]);
      for (const parameter of op.parameters ?? []) {
        // Text, or an integer (boolean) parameter: an integer (boolean) or its text (a typed client passes either).
        const types = parameter.schema?.type ?? (parameter.schema?.anyOf as Array<{ type?: string }> | undefined)?.map((s) => s.type).join('|');
        expect([name, parameter.name, types]).toEqual([name, parameter.name, expect.stringMatching(/^(string|integer\|string|boolean\|string)$/)]);
      }
    }
    const refs = JSON.stringify(document).match(/#\/components\/schemas\/[A-Za-z]+/g) ?? [];
    for (const ref of new Set(refs)) expect(document.components.schemas).toHaveProperty(ref.split('/').pop()!);
  });

  // The typed client's types accept a Date for these by name (newcomer nctime, F4): they must be the document's date-time query parameters.
  it("names the document's date-time query parameters as the client's time parameters", () => {
    const timeParameters = new Set<string>();
    for (const { op } of operations())
      for (const parameter of op.parameters ?? []) if (parameter.in === 'query' && parameter.schema?.format === 'date-time') timeParameters.add(parameter.name);
    expect([...timeParameters].sort()).toEqual([...TIME_QUERY_PARAMETERS].sort());
  });

  // Error.code was a free string and 33 of README's 38 codes appeared nowhere in the document (newcomer ncclient).
  it('declares every error code the service can answer, each route with the codes it may answer under their status', () => {
    const declared = (document.components.schemas.ErrorCode as { enum: string[] }).enum;
    expect(declared).toEqual(ALL_ERROR_CODES);
    // Found in the source independently of the registry: each one declared, and each declared one answered somewhere.
    const inSource = codesInSource();
    const undeclared = [...inSource].filter(([code]) => !declared.includes(code)).map(([code, file]) => `${code} (${file})`);
    expect(undeclared).toEqual([]);
    expect(declared.filter((code) => !inSource.has(code))).toEqual([]);
    const everywhere: Array<[string, ApiErrorCode]> = [
      ['408', 'request_timeout'],
      ['414', 'uri_too_long'],
      ['431', 'headers_too_large'],
      ['500', 'internal'],
      ['503', 'shutting_down'],
    ];
    const missing: string[] = [];
    const expectCode = (name: string, status: string, code: ApiErrorCode) => {
      if (!declaredCodes(document.paths[name.split(' ')[1]][name.split(' ')[0].toLowerCase()], status)?.includes(code))
        missing.push(`${name}: ${status} ${code}`);
    };
    for (const { name, op } of operations()) {
      for (const [status, code] of everywhere) expectCode(name, status, code);
      for (const [status] of Object.entries(op.responses).filter(([s]) => !/^2/.test(s)))
        for (const code of declaredCodes(op, status) ?? [])
          if (String(API_ERROR_CODES[code as ApiErrorCode]?.status) !== status) missing.push(`${name}: ${code} under ${status}`);
      if (op.parameters?.some((p) => p.name === 'minPosition')) {
        for (const code of ['projection_behind', 'store_unavailable'] as const) expectCode(name, '503', code);
        expectCode(name, '400', 'position_out_of_range');
      }
      if (op.requestBody)
        for (const code of ['payload_too_large', 'unsupported_media_type', 'malformed_json'] as const)
          expectCode(name, String(API_ERROR_CODES[code].status), code);
      if (name.includes('{sessionId}')) expectCode(name, '400', 'invalid_session_id');
    }
    expect(missing).toEqual([]);
    // Recall takes minPosition like every read: it answers 503 like them (it declared none).
    expect(declaredCodes(document.paths['/v1/recall'].get, '503')?.sort()).toEqual([
      'projection_behind',
      'read_models_damaged',
      'read_models_off_log',
      'shutting_down',
      'store_corrupt',
      'store_unavailable',
    ]);
  });

  // The documented error table (docs/http-api.md, Errors) is the one a reader sees: it lists every code, each under its status.
  it('lists every declared code in the documented error table, under its status', () => {
    const httpApi = documentationFile('docs/http-api.md');
    const table = httpApi.slice(httpApi.indexOf('| status | codes |'));
    const rows = table.slice(0, table.indexOf('\n\n')).split('\n').slice(2);
    const listed = new Map<string, string>();
    for (const row of rows) {
      const [, status, codes] = row.split('|').map((cell) => cell.trim());
      for (const [, code] of codes.matchAll(/`([a-z]+(?:_[a-z0-9]+)*)`/g))
        if ((code.includes('_') || ALL_ERROR_CODES.includes(code as ApiErrorCode)) && !listed.has(code)) listed.set(code, status);
    }
    expect(ALL_ERROR_CODES.filter((code) => listed.get(code) !== String(API_ERROR_CODES[code].status))).toEqual([]);
    expect([...listed.keys()].filter((code) => !ALL_ERROR_CODES.includes(code as ApiErrorCode))).toEqual([]);
  });

  // The service takes a key as a bearer token or as X-Api-Key; the document named only the first (newcomer ncsec).
  it('declares both ways to send an API key on every /v1 route', () => {
    const schemes = (document.components as { securitySchemes?: Record<string, { type: string; in?: string; name?: string; scheme?: string }> })
      .securitySchemes;
    expect(schemes).toMatchObject({ bearer: { type: 'http', scheme: 'bearer' }, 'api-key': { type: 'apiKey', in: 'header', name: 'X-Api-Key' } });
    for (const [route, methods] of Object.entries(document.paths).filter(([p]) => p.startsWith('/v1/'))) {
      for (const [method, op] of Object.entries(methods)) {
        const security = (op as { security?: Array<Record<string, unknown>> }).security ?? [];
        expect([method, route, security.flatMap((s) => Object.keys(s)).sort()]).toEqual([method, route, ['api-key', 'bearer']]);
      }
    }
  });

  // Recall's filters had empty descriptions (sessionId, type, archived, compactionId, from, to, limit, cursor).
  it('describes every query parameter of every route', () => {
    const undescribed = Object.entries(document.paths).flatMap(([route, methods]) =>
      Object.entries(methods).flatMap(([method, op]) =>
        (op.parameters ?? [])
          .filter((p) => (p as { in?: string }).in === 'query' && !((p as { description?: string }).description ?? '').trim())
          .map((p) => `${method.toUpperCase()} ${route} ?${p.name}`),
      ),
    );
    expect(undescribed).toEqual([]);
  });

  it('answers every route with the shape the document declares', async () => {
    const check = <S extends z.ZodType>(schema: S, value: unknown) => schema.parse(value);
    const path = { sessionId: 'contract' };
    const appended = await client.POST('/v1/sessions/{sessionId}/events', {
      params: { path },
      body: {
        events: [
          { type: 'system', text: 'You are terse.' },
          { type: 'user', text: 'Look up order 42.' },
          { type: 'assistant', text: null, toolCalls: [{ id: 'call-1', name: 'lookup', arguments: '{"order":42}' }] },
          { type: 'tool', responses: [{ toolCallId: 'call-1', name: 'lookup', data: 'shipped' }] },
        ],
      },
    });
    check(schemas.AppendResultSchema, appended.data);
    const messages = await client.POST('/v1/sessions/{sessionId}/messages', {
      params: { path },
      body: {
        messages: [
          { role: 'assistant', content: 'It shipped.' },
          { role: 'user', content: 'Thanks, and order 43?' },
          { role: 'assistant', content: 'Also shipped.' },
        ],
      },
    });
    check(schemas.AppendResultSchema, messages.data);
    check(
      schemas.SessionPolicySchema,
      (await client.PUT('/v1/sessions/{sessionId}/policy', { params: { path }, body: { strategy: { type: 'turn-window', maxTurns: 50 } } })).data,
    );
    const dry = await client.POST('/v1/sessions/{sessionId}/compactions', {
      params: { path },
      body: { strategy: { type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 0 }, dryRun: true },
    });
    check(schemas.CompactionAnswerSchema, dry.data);
    const compaction = await client.POST('/v1/sessions/{sessionId}/compactions', {
      params: { path },
      body: { strategy: { type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 0 } },
    });
    const done = check(schemas.CompactionAnswerSchema, compaction.data);
    const noop = await client.POST('/v1/sessions/{sessionId}/compactions', {
      params: { path },
      body: { strategy: { type: 'sliding-window', maxEvents: 100 } },
    });
    check(schemas.CompactionAnswerSchema, noop.data);
    const minPosition = done.position;
    check(schemas.WindowSchema, (await client.GET('/v1/sessions/{sessionId}/window', { params: { path, query: { minPosition } } })).data);
    check(schemas.WindowSchema, (await client.GET('/v1/sessions/{sessionId}/window', { params: { path, query: { format: 'openai' } } })).data);
    check(schemas.WindowSchema, (await client.GET('/v1/sessions/{sessionId}/window', { params: { path, query: { atRevision: 2 } } })).data);
    // Integer query parameters take a number or its text (both arrive as the same text).
    const page = check(
      schemas.LogPageSchema,
      (await client.GET('/v1/sessions/{sessionId}/events', { params: { path, query: { limit: 3, fromRevision: '0' } } })).data,
    );
    expect(page.events).toHaveLength(3);
    check(schemas.LogPageSchema, (await client.GET('/v1/sessions/{sessionId}/events', { params: { path } })).data);
    const recall = check(schemas.RecallPageSchema, (await client.GET('/v1/recall', { params: { query: { q: 'order', limit: 1 } } })).data);
    expect(recall.items).toHaveLength(1);
    check(schemas.SessionListSchema, (await client.GET('/v1/sessions', {})).data);
    check(schemas.SessionSummarySchema, (await client.GET('/v1/sessions/{sessionId}', { params: { path } })).data);
    check(schemas.SessionPolicySchema, (await client.GET('/v1/sessions/{sessionId}/policy', { params: { path } })).data);
    check(schemas.CompactionHistoryPageSchema, (await client.GET('/v1/sessions/{sessionId}/compactions', { params: { path } })).data);
    const compactionPath = { ...path, compactionId: done.compactionId! };
    check(
      schemas.CompactionHistoryItemSchema,
      (await client.GET('/v1/sessions/{sessionId}/compactions/{compactionId}', { params: { path: compactionPath } })).data,
    );
    check(
      schemas.CompactionDiffSchema,
      (await client.GET('/v1/sessions/{sessionId}/compactions/{compactionId}/diff', { params: { path: compactionPath } })).data,
    );
    check(schemas.HealthSchema, (await client.GET('/health', {})).data);
    check(schemas.ReadinessSchema, (await client.GET('/health/ready', {})).data);
    const metrics = await client.GET('/metrics', { parseAs: 'text' });
    expect(metrics.data).toContain('# HELP');
    check(schemas.EraseAnswerSchema, (await client.DELETE('/v1/sessions/{sessionId}', { params: { path } })).data);
    const missing = await client.GET('/v1/sessions/{sessionId}/window', { params: { path } });
    expect(check(schemas.ErrorBodySchema, missing.error)).toMatchObject({ code: 'session_not_found' });
    expect(validator.violations).toEqual([]);
  });

  // The window answered fields its schema forbade (additionalProperties: false) for real conversations: a tool message's
  // name (τ-bench sends it on every one), notices, a user's name and text parts, an assistant's refusal (newcomer ncclient).
  it('answers a conversation with every optional field of every event and message as the document declares', async () => {
    const path = { sessionId: 'contract-fields' };
    const at = '2026-01-31T12:00:00Z';
    const events = await client.POST('/v1/sessions/{sessionId}/events', {
      params: { path },
      body: {
        userId: 'u-1',
        expectedRevision: 'no_stream',
        events: [
          {
            id: 'n-sys',
            type: 'system',
            text: 'You are terse.',
            textParts: ['You are ', 'terse.'],
            name: 'policy',
            createdAt: at,
            metadata: { source: 'web' },
          },
          { id: 'n-u1', type: 'user', text: 'Hello there', textParts: ['Hello ', 'there'], name: 'alice', metadata: { source: 'web', tags: ['a', 1, null] } },
          { id: 'n-notice', type: 'system', text: 'A file arrived.', notice: true },
          { id: 'n-notice-named', type: 'system', text: 'A reminder.', name: 'notice' },
          {
            id: 'n-a1',
            type: 'assistant',
            text: 'Let me look.',
            textParts: ['Let me ', 'look.'],
            name: 'agent',
            toolCalls: [{ id: 'call-a', name: 'lookup', arguments: '{}' }],
          },
          { id: 'n-t1', type: 'tool', name: 'lookup', responses: [{ toolCallId: 'call-a', name: 'lookup', data: 'found it', dataParts: ['found ', 'it'] }] },
          { id: 'n-a2', type: 'assistant', text: null, refusal: 'I cannot share that.' },
          // Null optional fields count as absent (README, "Null fields"): the document lets a typed client send them.
          { id: null, type: 'user', text: 'And then?', createdAt: null, metadata: null, name: null, textParts: null },
          { id: 'n-a3', type: 'assistant', text: 'Done.', toolCalls: null, refusal: null, name: null },
          { id: 'n-sys2', type: 'system', text: 'Be brief.', notice: false },
          { id: 'n-sum', type: 'summary', shadowPrompt: 'Summary so far:', text: 'They said hello.' },
        ],
      },
    });
    expect(events.error).toBeUndefined();
    // An SDK reply appended as returned: its null fields (audio) count as absent. The client's types close the message (a literal
    // may not name a field the service does not keep, as `audio: { … }` is refused), so it comes as the object an SDK gives.
    const reply = { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'Here it is.' }], name: 'agent', refusal: null, audio: null };
    const messages = await client.POST('/v1/sessions/{sessionId}/messages', {
      params: { path },
      body: {
        userId: 'u-1',
        messages: [
          { role: 'developer', content: 'Answer in English.', name: 'ops' },
          { role: 'system', content: 'Heads up.', name: 'notice' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Look up ' },
              { type: 'text', text: 'my trip.' },
            ],
            name: 'alice',
            id: null,
          },
          { role: 'assistant', content: null, tool_calls: [{ id: 'call-b', type: 'function', function: { name: 'get_trip', arguments: '{"id":1}' } }] },
          // τ-bench sends the tool's name on every tool message.
          {
            role: 'tool',
            tool_call_id: 'call-b',
            name: 'get_trip',
            content: [
              { type: 'text', text: '{"trip":' },
              { type: 'text', text: '1}' },
            ],
          },
          { role: 'assistant', content: null, refusal: 'Not allowed.' },
          reply,
        ],
      },
    });
    expect(messages.error).toBeUndefined();
    const window = await client.GET('/v1/sessions/{sessionId}/window', { params: { path } });
    const native = schemas.WindowSchema.parse(window.data);
    expect(
      'events' in native &&
        native.events.map((e) =>
          Object.keys(e)
            .filter((k) => ['name', 'textParts', 'notice', 'refusal'].includes(k))
            .sort(),
        ),
    ).toEqual(expect.arrayContaining([['name', 'textParts'], ['notice'], ['name'], ['refusal']]));
    const openai = await client.GET('/v1/sessions/{sessionId}/window', { params: { path, query: { format: 'openai' } } });
    const rendered = schemas.WindowSchema.parse(openai.data);
    expect('messages' in rendered && rendered.messages).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ role: 'system', name: 'notice' }),
        expect.objectContaining({ role: 'user', name: 'alice', content: [expect.any(Object), expect.any(Object)] }),
        expect.objectContaining({ role: 'assistant', refusal: 'Not allowed.' }),
        expect.objectContaining({ role: 'tool', name: 'get_trip' }),
      ]),
    );
    // The client types read what the server sends: a message's name and refusal, a window event's notice.
    if (openai.data && 'messages' in openai.data)
      for (const m of openai.data.messages) if (m.role === 'assistant') void (m.refusal satisfies string | undefined);
    for (const revision of [3, 8]) await client.GET('/v1/sessions/{sessionId}/window', { params: { path, query: { atRevision: revision, format: 'openai' } } });
    const log = await client.GET('/v1/sessions/{sessionId}/events', { params: { path, query: { limit: 1000 } } });
    expect(log.data?.events.find((e) => e.eventId === 'n-u1')?.data).toMatchObject({ metadata: { source: 'web' } });
    const compaction = await client.POST('/v1/sessions/{sessionId}/compactions', {
      params: { path },
      body: { strategy: { type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: null }, trigger: null, estimator: null, dryRun: null },
    });
    expect(compaction.data?.outcome).toBe('compacted');
    const compactionPath = { ...path, compactionId: compaction.data!.compactionId! };
    await client.GET('/v1/sessions/{sessionId}/compactions/{compactionId}/diff', { params: { path: compactionPath } });
    await client.GET('/v1/sessions/{sessionId}/compactions/{compactionId}', { params: { path: compactionPath } });
    await client.GET('/v1/sessions/{sessionId}/compactions', { params: { path } });
    for (const format of ['events', 'openai'] as const) await client.GET('/v1/sessions/{sessionId}/window', { params: { path, query: { format } } });
    await client.GET('/v1/sessions/{sessionId}/events', { params: { path, query: { limit: 1000 } } });
    await client.GET('/v1/recall', { params: { query: { q: 'trip', sessionId: path.sessionId } } });
    await client.GET('/v1/sessions/{sessionId}', { params: { path } });
    expect(validator.violations).toEqual([]);
  });

  it('answers errors with a declared code under a declared status, with their details typed', async () => {
    const path = { sessionId: 'contract-errors' };
    const before = validator.checked.length;
    await client.POST('/v1/sessions/{sessionId}/events', {
      params: { path },
      body: { userId: 'owner', events: [{ id: 'e1', type: 'user', text: 'hi' }] },
    });
    const conflict = await client.POST('/v1/sessions/{sessionId}/events', {
      params: { path },
      body: { expectedRevision: 5, events: [{ type: 'user', text: 'x' }] },
    });
    expect(conflict.response.status).toBe(409);
    // The 409 details are typed (they were not: `expected`, `actual`, `userId`), present once the code is checked.
    if (conflict.error?.code !== 'wrong_expected_revision') throw new Error(`expected wrong_expected_revision, got ${JSON.stringify(conflict.error)}`);
    const expected: string = conflict.error.expected;
    const actual: string = conflict.error.actual;
    expect([expected, actual]).toEqual(['5', '0']);
    const owner = await client.POST('/v1/sessions/{sessionId}/events', { params: { path }, body: { userId: 'other', events: [{ type: 'user', text: 'x' }] } });
    const ownerId: string | undefined = owner.error?.code === 'user_id_conflict' ? owner.error.userId : undefined;
    expect([ownerId, owner.error?.code]).toEqual(['owner', 'user_id_conflict']);
    const duplicate = await client.POST('/v1/sessions/{sessionId}/events', { params: { path }, body: { events: [{ id: 'e1', type: 'user', text: 'other' }] } });
    expect(duplicate.error).toMatchObject({ code: 'duplicate_event_id', eventId: 'e1' });
    const unknownCall = await client.POST('/v1/sessions/{sessionId}/messages', {
      params: { path },
      body: { messages: [{ role: 'tool', tool_call_id: 'nope', content: 'x' }] },
    });
    expect(unknownCall.error).toMatchObject({ code: 'unknown_tool_call', toolCallId: 'nope' });
    const invalid = await client.POST('/v1/sessions/{sessionId}/messages', { params: { path }, body: { messages: [{ role: 'user', content: '' }] } });
    expect(invalid.error).toMatchObject({ code: 'invalid_message', parameter: 'messages[0].content' });
    const badParameter = await client.POST('/v1/sessions/{sessionId}/compactions', {
      params: { path },
      body: { strategy: { type: 'sliding-window', maxEvents: 0 } },
    });
    expect(badParameter.error?.code).toBe('invalid_parameter');
    expect((await client.GET('/v1/sessions/{sessionId}/window', { params: { path, query: { atRevision: 99 } } })).error?.code).toBe('revision_out_of_range');
    expect((await client.GET('/v1/sessions/{sessionId}/window', { params: { path, query: { minPosition: '999999999' } } })).error?.code).toBe(
      'position_out_of_range',
    );
    expect((await client.GET('/v1/recall', { params: { query: { q: ' ' } } })).error?.code).toBe('invalid_query');
    expect((await client.GET('/v1/sessions/{sessionId}/events', { params: { path: { sessionId: 'a b' } } })).error?.code).toBe('invalid_session_id');
    const compaction = { ...path, compactionId: '0f8e5e7a-3b1c-5d2e-9f4a-6b7c8d9e0f1a' };
    expect((await client.GET('/v1/sessions/{sessionId}/compactions/{compactionId}', { params: { path: compaction } })).error?.code).toBe(
      'compaction_not_found',
    );
    expect((await client.GET('/v1/sessions', { params: { query: { cursor: 'garbage' } } })).error?.code).toBe('invalid_query');
    // Bodies the typed client cannot send, through the same checking fetch.
    const url = `${harness.baseUrl}/v1/sessions/${path.sessionId}/events`;
    const raw = async (init: RequestInit) => (await (await validator.fetch(url, { method: 'POST', ...init })).json()) as { code: string };
    expect(await raw({ headers: { 'content-type': 'text/plain' }, body: 'hi' })).toMatchObject({ code: 'unsupported_media_type' });
    expect(await raw({ headers: { 'content-type': 'application/json' }, body: '{"events": [' })).toMatchObject({ code: 'malformed_json' });
    expect(await raw({ headers: { 'content-type': 'application/json; charset=latin1' }, body: '{}' })).toMatchObject({ code: 'unsupported_encoding' });
    expect(await raw({ headers: { 'content-type': 'application/json' }, body: '{"events": [], "extra": 1}' })).toMatchObject({ code: 'validation_failed' });
    expect(validator.checked.slice(before).filter((c) => c.status >= 400).length).toBe(16);
    expect(validator.violations).toEqual([]);
  });

  describeWithShared('real τ-bench conversations', TAU_BENCH_FILE, () => {
    // Every 15th of the 150 sessions (10): each message shape of the file (system, user, assistant with and without tool_calls, tool with name).
    const sessions = () =>
      (JSON.parse(fs.readFileSync(TAU_BENCH_FILE, 'utf8')) as Array<{ task_id: number; traj: Array<Record<string, unknown>> }>).filter((_, i) => i % 15 === 0);

    it('answers every read of them as the document declares (window in both formats, log, recall, compactions, diffs)', async () => {
      for (const [i, session] of sessions().entries()) {
        const path = { sessionId: `tau-${i}-${session.task_id}` };
        const messages = session.traj as Schemas['OpenAiInputMessage'][];
        const appended = await client.POST('/v1/sessions/{sessionId}/messages', { params: { path }, body: { messages } });
        expect([path.sessionId, appended.error]).toEqual([path.sessionId, undefined]);
        await client.GET('/v1/sessions/{sessionId}/window', { params: { path, query: { format: 'openai' } } });
        const compaction = await client.POST('/v1/sessions/{sessionId}/compactions', {
          params: { path },
          body: { strategy: { type: 'recursive-summarization', maxEventsToKeep: 6, overlapSize: 1 } },
        });
        expect([path.sessionId, compaction.error]).toEqual([path.sessionId, undefined]);
        for (const format of ['events', 'openai'] as const) {
          await client.GET('/v1/sessions/{sessionId}/window', { params: { path, query: { format } } });
          await client.GET('/v1/sessions/{sessionId}/window', { params: { path, query: { format, atRevision: Math.floor(session.traj.length / 2) } } });
        }
        await client.GET('/v1/sessions/{sessionId}/events', { params: { path, query: { limit: 1000 } } });
        await client.GET('/v1/sessions/{sessionId}', { params: { path } });
        await client.GET('/v1/sessions/{sessionId}/compactions', { params: { path } });
        if (compaction.data?.compactionId) {
          const compactionPath = { ...path, compactionId: compaction.data.compactionId };
          await client.GET('/v1/sessions/{sessionId}/compactions/{compactionId}', { params: { path: compactionPath } });
          await client.GET('/v1/sessions/{sessionId}/compactions/{compactionId}/diff', { params: { path: compactionPath } });
        }
        await client.GET('/v1/recall', { params: { query: { q: 'reservation', sessionId: path.sessionId } } });
      }
      await client.GET('/v1/recall', { params: { query: { q: 'flight baggage', limit: 100 } } });
      await client.GET('/v1/sessions', { params: { query: { limit: 100 } } });
      expect(validator.checked.filter((c) => c.route === '/v1/sessions/{sessionId}/window').length).toBeGreaterThanOrEqual(40);
      expect(validator.violations).toEqual([]);
    });
  });
});
