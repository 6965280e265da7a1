/**
 * Every shared conformance vector, through the HTTP API of a fresh service (the same runner as
 * `npm run conformance`). A failing vector fails this suite with its problems listed.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { VECTORS_DIR, describeWithShared } from '../support/shared-dir';
import { runConformance, type VectorResult } from './conformance-runner';
import { loadVectors } from './conformance-vectors';

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

describe('the runner runs every vector shape (issue 10 item 7)', () => {
  const vectors = [
    { id: 'empty-session', estimator: 'chars', events: [], strategy: { type: 'sliding-window', maxEvents: 2 }, expect: { kept: [], archived: [] } },
    { id: 'empty-session-trigger', estimator: 'chars', events: [], trigger: { type: 'token-count', threshold: 1 }, expect: { triggerFired: false } },
    {
      id: 'notice-counted',
      estimator: 'chars',
      events: [
        { id: 's1', type: 'system', text: 'abc' },
        { id: 'n1', type: 'system', text: 'abcdefghij', notice: true },
      ],
      trigger: { type: 'token-count', threshold: 29 }, // "System: abc" 11 + "System: abcdefghij" 18
      expect: { triggerFired: true },
    },
    {
      id: 'notice-archived',
      estimator: 'chars',
      events: [
        { id: 's1', type: 'system', text: 'rules' },
        { id: 'u1', type: 'user', text: 'a' },
        { id: 'n1', type: 'system', text: 'file', notice: true },
        { id: 'u2', type: 'user', text: 'b' },
      ],
      strategy: { type: 'turn-window', maxTurns: 1 },
      expect: { kept: ['s1', 'u2'], archived: ['u1', 'n1'] },
    },
    { id: 'wrong-on-purpose', estimator: 'chars', events: [], strategy: { type: 'sliding-window', maxEvents: 2 }, expect: { kept: ['ghost'] } },
  ];
  let dir: string;
  let results: VectorResult[] = [];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vector-shapes-'));
    for (const v of vectors) fs.writeFileSync(path.join(dir, `${v.id}.json`), JSON.stringify(v));
    results = await runConformance(dir);
  }, 120_000);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('passes vectors with no events (a session created by its policy) and with notices', () => {
    const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
    expect(results.filter((r) => r.id !== 'wrong-on-purpose').sort(byId)).toEqual(
      vectors
        .filter((v) => v.id !== 'wrong-on-purpose')
        .map((v) => ({ id: v.id, file: `${v.id}.json`, problems: [] }))
        .sort(byId),
    );
  });

  it('still fails a vector whose expectation does not hold', () => {
    expect(results.find((r) => r.id === 'wrong-on-purpose')?.problems[0]).toMatch(/^kept: expected \["ghost"\], got \[\]/);
  });
});
