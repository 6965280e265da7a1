/**
 * Every shared conformance vector, through the HTTP API of a fresh service (the same runner as
 * `npm run conformance`). A failing vector fails this suite with its problems listed.
 */
import { VECTORS_DIR, describeWithShared } from '../support/shared-dir';
import { loadVectors, runConformance, type VectorResult } from './conformance-runner';

describeWithShared('conformance vectors over HTTP', VECTORS_DIR, () => {
  let results: VectorResult[] = [];

  beforeAll(async () => {
    results = await runConformance(VECTORS_DIR);
  }, 120_000);

  it('runs every vector file', () => {
    expect(results.map((r) => r.file)).toEqual(loadVectors(VECTORS_DIR).map((v) => v.file));
  });

  it.each(loadVectors(VECTORS_DIR).map((v) => v.file))('%s', (file) => {
    const result = results.find((r) => r.file === file);
    expect(result?.problems).toEqual([]);
  });
});
