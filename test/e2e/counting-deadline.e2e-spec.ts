/**
 * `COUNTING_DEADLINE_MS`: the deadline of counting a large request's tokens in the worker thread
 * (before: 30 s, fixed). A request whose counting runs past the configured deadline is refused with
 * it (413 `counting_too_costly`, or 503 `counting_timeout` when the loaded machine starved the
 * thread: both carry `deadlineMs`), nothing written; a service started without it has 30 s again.
 */
import * as fs from 'node:fs';
import { sharedTokenCountingPool } from '../../libs/session/src/token-counting/token-counting-pool';
import { startService, type Harness } from '../support/service-harness';

/** `length` CJK ideographs from a fixed pseudo-random sequence: the costliest text to count (about 2 µs a character). */
function ideographs(length: number, seed: number): string {
  const codes = new Uint16Array(length);
  for (let i = 0, x = seed; i < length; i++) {
    x = (x * 1_103_515_245 + 12_345) >>> 0;
    codes[i] = 0x4e00 + (x % 0x5000);
  }
  return Buffer.from(codes.buffer).toString('utf16le');
}

describe('COUNTING_DEADLINE_MS', () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    await harness?.stop();
    if (harness) fs.rmSync(harness.dataDir, { recursive: true, force: true });
    harness = undefined;
  });

  it('refuses, with the configured deadline, a request whose counting runs past it, and writes nothing', async () => {
    harness = await startService({ env: { COUNTING_DEADLINE_MS: '1000', MAX_BODY_BYTES: String(64 * 1024 * 1024) } });
    expect(sharedTokenCountingPool().deadlineMs).toBe(1000);
    // Three texts of 1,000,000 ideographs: several seconds of counting, far past 1 s, far below the default 30 s.
    const events = [1, 2, 3].map((seed) => ({ id: `big-${seed}`, type: 'user', text: ideographs(1_000_000, seed) }));
    const refused = await harness.http().post('/v1/sessions/costly/events').send({ events });
    expect({ status: refused.status, code: refused.body.code, deadlineMs: refused.body.deadlineMs }).toEqual({
      status: refused.status === 413 ? 413 : 503,
      code: refused.status === 413 ? 'counting_too_costly' : 'counting_timeout',
      deadlineMs: 1000,
    });
    expect(refused.body.message).toContain('1000 ms');
    expect((await harness.http().get('/v1/sessions/costly/window')).status).toBe(404);
  }, 120_000);

  it('is 30 s when not set', async () => {
    harness = await startService({ env: { COUNTING_DEADLINE_MS: '2000' } });
    expect(sharedTokenCountingPool().deadlineMs).toBe(2000);
    await harness.stop();
    fs.rmSync(harness.dataDir, { recursive: true, force: true });
    harness = await startService();
    expect(sharedTokenCountingPool().deadlineMs).toBe(30_000);
  });
});
