/**
 * The OpenAPI document is the contract (issue 17 item 7, issue 13): the committed client types in
 * `libs/client` are exactly what openapi-typescript generates from the running service's document
 * (regenerate with `npm run client:generate` when this fails); every route declares a typed answer
 * and its error answers; and the real answers of every route parse with the schema the document
 * declares for them (strict: an undeclared field fails). Runs in about 5 s.
 */
import * as fs from 'node:fs';
import type { z } from 'zod';
import type { SessionServiceClient } from '@lib/client';
import { CLIENT_TYPES_FILE, clientTypesSource } from '../../libs/client/scripts/client-types';
import * as schemas from '../../apps/session-service/src/http/response-schemas';
import { startListeningService, type ClientHarness } from '../support/client-harness';

type Operation = {
  parameters?: Array<{ in: string; name: string; schema?: Record<string, unknown> }>;
  responses: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }> }>;
};

describe('OpenAPI contract', () => {
  let harness: ClientHarness;
  let client: SessionServiceClient;
  let document: { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown> } };

  beforeAll(async () => {
    harness = await startListeningService();
    client = harness.client();
    document = (await (await fetch(`${harness.baseUrl}/docs/openapi.json`)).json()) as typeof document;
  });
  afterAll(() => harness?.stop());

  it('has committed client types generated from this document (run `npm run client:generate` after changing a route)', async () => {
    const expected = clientTypesSource(document);
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
    const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ route: `${method.toUpperCase()} ${path}`, path, op })),
    );
    expect(operations.length).toBeGreaterThanOrEqual(16);
    for (const { route, path, op } of operations) {
      const success = Object.entries(op.responses).filter(([status]) => /^2/.test(status));
      expect([route, success.length]).toEqual([route, 1]);
      const [, answer] = success[0];
      const schema = answer.content?.['application/json']?.schema ?? answer.content?.['text/plain']?.schema;
      expect([route, schema && Object.keys(schema).length > 0]).toEqual([route, true]);
      if (path.startsWith('/v1/')) {
        for (const status of ['400', '401', '429'])
          expect([route, status, op.responses[status]?.content?.['application/json']?.schema]).toEqual([route, status, { $ref: '#/components/schemas/Error' }]);
      }
      for (const parameter of op.parameters ?? []) {
        // Text, or an integer (boolean) parameter: an integer (boolean) or its text (a typed client passes either).
        const types = parameter.schema?.type ?? (parameter.schema?.anyOf as Array<{ type?: string }> | undefined)?.map((s) => s.type).join('|');
        expect([route, parameter.name, types]).toEqual([route, parameter.name, expect.stringMatching(/^(string|integer\|string|boolean\|string)$/)]);
      }
    }
    const refs = JSON.stringify(document).match(/#\/components\/schemas\/[A-Za-z]+/g) ?? [];
    for (const ref of new Set(refs)) expect(document.components.schemas).toHaveProperty(ref.split('/').pop()!);
  });

  // The service takes a key as a bearer token or as X-Api-Key; the document named only the first (newcomer ncsec).
  it('declares both ways to send an API key on every /v1 route', () => {
    const schemes = (document.components as { securitySchemes?: Record<string, { type: string; in?: string; name?: string; scheme?: string }> })
      .securitySchemes;
    expect(schemes).toMatchObject({ bearer: { type: 'http', scheme: 'bearer' }, 'api-key': { type: 'apiKey', in: 'header', name: 'X-Api-Key' } });
    for (const [path, methods] of Object.entries(document.paths).filter(([p]) => p.startsWith('/v1/'))) {
      for (const [method, op] of Object.entries(methods)) {
        const security = (op as { security?: Array<Record<string, unknown>> }).security ?? [];
        expect([method, path, security.flatMap((s) => Object.keys(s)).sort()]).toEqual([method, path, ['api-key', 'bearer']]);
      }
    }
  });

  // Recall's filters had empty descriptions (sessionId, type, archived, compactionId, from, to, limit, cursor).
  it('describes every query parameter of every route', () => {
    const undescribed = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).flatMap(([method, op]) =>
        (op.parameters ?? [])
          .filter((p) => (p as { in?: string }).in === 'query' && !((p as { description?: string }).description ?? '').trim())
          .map((p) => `${method.toUpperCase()} ${path} ?${p.name}`),
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
    const minPosition = done.position!;
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
    const metrics = await client.GET('/metrics', { parseAs: 'text' });
    expect(metrics.data).toContain('# HELP');
    check(schemas.EraseAnswerSchema, (await client.DELETE('/v1/sessions/{sessionId}', { params: { path } })).data);
    const missing = await client.GET('/v1/sessions/{sessionId}/window', { params: { path } });
    expect(check(schemas.ErrorBodySchema, missing.error)).toMatchObject({ code: 'session_not_found' });
  });
});
