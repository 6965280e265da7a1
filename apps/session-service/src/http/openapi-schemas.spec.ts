import { openApiSchema } from './openapi-schemas';

/** Every node of a JSON Schema (objects, depth first). */
function* nodes(node: unknown): Generator<Record<string, unknown>> {
  if (node === null || typeof node !== 'object') return;
  if (!Array.isArray(node)) yield node as Record<string, unknown>;
  for (const child of Object.values(node)) yield* nodes(child);
}

describe('request body schemas: revisions sent as text are bounded as the query revisions are (newcomer ncgocurl A12)', () => {
  it.each(['appendEvents', 'appendMessages', 'policy'] as const)('%s: expectedRevision as a string has the pattern and maxLength 19', (name) => {
    const revision = (openApiSchema(name).properties as Record<string, { anyOf: Array<Record<string, unknown>> }>).expectedRevision;
    expect(revision.anyOf).toContainEqual({ type: 'string', pattern: '^(0|[1-9][0-9]*)$', maxLength: 19 });
  });

  it.each(['appendEvents', 'appendMessages', 'policy', 'compact'] as const)('%s: every decimal-text field has a maxLength', (name) => {
    const decimals = [...nodes(openApiSchema(name))].filter((node) => node.pattern === '^(0|[1-9][0-9]*)$');
    for (const node of decimals) expect(node.maxLength).toEqual(expect.any(Number));
  });
});
