/**
 * Per-request work an adversary controls (issue 17, item 1): a maximum-size text built to be as
 * costly as possible to tokenize must not stall the service for other clients. While such an
 * append is in flight, `/health` answers within 200 ms, and the append is counted exactly.
 * Runtime: about 10–20 s on the 2-core CI machine (one 1,000,000-character append).
 */
import * as fs from 'node:fs';
import { getEstimator } from '@lib/compaction';
import { startService, type Harness } from '../support/service-harness';

/** 1,000,000 (the default MAX_TEXT_LENGTH) pseudo-random CJK ideographs: one pre-token, no merge repeats. */
function adversarialText(length: number): string {
  let x = 1;
  const units = new Array<number>(length);
  for (let i = 0; i < length; i++) {
    x = (Math.imul(x, 1103515245) + 12345) & 0x7fffffff;
    units[i] = 0x4e00 + ((x >> 8) % 20000);
  }
  let text = '';
  for (let i = 0; i < length; i += 8192) text += String.fromCharCode(...units.slice(i, i + 8192));
  return text;
}

describe('adversarial per-request cost', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startService({ env: { MAX_BODY_BYTES: String(8 * 1024 * 1024) } });
  });
  afterAll(async () => {
    await harness.stop();
    fs.rmSync(harness.dataDir, { recursive: true, force: true });
  });

  it('answers /health within 200 ms while a maximum-size adversarial append is in flight', async () => {
    const text = adversarialText(1_000_000);
    let done = false;
    const append = harness
      .http()
      .post('/v1/sessions/adversary/events')
      .send({ events: [{ id: 'big', type: 'user', text }] })
      .then((res) => {
        done = true;
        return res;
      });
    const latencies: number[] = [];
    while (!done) {
      const start = performance.now();
      const res = await harness.http().get('/health');
      if (done) break;
      latencies.push(performance.now() - start);
      expect(res.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const res = await append;
    expect(res.status).toBe(201);
    // The append was in flight for several probes, and none of them waited 200 ms or more.
    expect(latencies.length).toBeGreaterThanOrEqual(5);
    expect(Math.max(...latencies)).toBeLessThan(200);

    const log = await harness.http().get('/v1/sessions/adversary/window').expect(200);
    expect(log.body.tokens).toBe(getEstimator('cl100k_base').count(`User: ${text}`));
  }, 120_000);
});
