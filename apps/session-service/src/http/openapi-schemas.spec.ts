import { MAX_REVISION } from '@lib/event-store';
import { decimalRangePattern } from './decimal-range-pattern';
import { openApiSchema } from './openapi-schemas';

/** Every node of a JSON Schema (objects, depth first). */
function* nodes(node: unknown): Generator<Record<string, unknown>> {
  if (node === null || typeof node !== 'object') return;
  if (!Array.isArray(node)) yield node as Record<string, unknown>;
  for (const child of Object.values(node)) yield* nodes(child);
}

const REVISION_PATTERN = decimalRangePattern(0n, MAX_REVISION);

describe('request body schemas: revisions sent as text are bounded as the query revisions are (newcomer ncgocurl A12)', () => {
  it.each(['appendEvents', 'appendMessages', 'policy'] as const)('%s: expectedRevision as a string has the range pattern and maxLength 19', (name) => {
    const revision = (openApiSchema(name).properties as Record<string, { anyOf: Array<Record<string, unknown>> }>).expectedRevision;
    expect(revision.anyOf).toContainEqual({ type: 'string', pattern: REVISION_PATTERN, maxLength: 19 });
    const text = new RegExp(REVISION_PATTERN);
    expect([text.test('9223372036854775807'), text.test('9223372036854775808'), text.test('07')]).toEqual([true, false, false]);
  });

  it.each(['appendEvents', 'appendMessages', 'policy', 'compact'] as const)('%s: every decimal-text field has a maxLength', (name) => {
    const decimals = [...nodes(openApiSchema(name))].filter((node) => node.pattern === REVISION_PATTERN);
    for (const node of decimals) expect(node.maxLength).toEqual(expect.any(Number));
  });
});
