/**
 * `SESSION_CACHE_MAX_MB` bounds the write side's cache of session states by the memory its states
 * hold (a state keeps its active events whole), and `/metrics` shows the cache:
 * `session_state_cache_bytes` (estimated) and `session_state_cache_sessions`.
 */
import * as fs from 'node:fs';
import { startService, type Harness } from '../support/service-harness';

jest.setTimeout(60_000);

function gauge(text: string, name: string): number {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  if (!m) throw new Error(`${name} is not in /metrics`);
  return Number(m[1]);
}

describe('the cache of session states on /metrics, bounded by SESSION_CACHE_MAX_MB', () => {
  let harness: Harness | undefined;
  afterAll(async () => {
    await harness?.stop();
    if (harness) fs.rmSync(harness.dataDir, { recursive: true, force: true });
  });

  it('given a 1 MiB bound, when six sessions each take 300 KiB of tool output, then the cache holds at most about 1 MiB of the newest, and every session still answers and takes appends', async () => {
    harness = await startService({ env: { SESSION_CACHE_MAX_MB: '1' } });
    const h = harness;
    const empty = (await h.http().get('/metrics').expect(200)).text;
    expect([gauge(empty, 'session_state_cache_bytes'), gauge(empty, 'session_state_cache_sessions')]).toEqual([0, 0]);
    const output = 'x'.repeat(150 * 1024);
    for (let i = 0; i < 6; i++) {
      for (const events of [
        [
          { id: `u${i}`, type: 'user', text: 'read the file' },
          { id: `a${i}`, type: 'assistant', text: null, toolCalls: [{ id: `c${i}`, name: 'read_file', arguments: '{"path":"/src/main.ts"}' }] },
        ],
        [{ id: `t${i}`, type: 'tool', responses: [{ toolCallId: `c${i}`, name: 'read_file', data: output }] }],
      ])
        await h.http().post(`/v1/sessions/s${i}/events`).send({ events }).expect(201);
    }
    const text = (await h.http().get('/metrics').expect(200)).text;
    const [bytes, sessions] = [gauge(text, 'session_state_cache_bytes'), gauge(text, 'session_state_cache_sessions')];
    expect(bytes).toBeGreaterThan(300 * 1024);
    expect(bytes).toBeLessThanOrEqual(1024 * 1024);
    expect(sessions).toBeGreaterThanOrEqual(2);
    expect(sessions).toBeLessThanOrEqual(3);
    // the first session was evicted: it is read from the store again, its append goes after its three events
    const appended = await h
      .http()
      .post('/v1/sessions/s0/events')
      .send({ events: [{ id: 'u0b', type: 'user', text: 'thanks' }] })
      .expect(201);
    expect(appended.body.revision).toBe('3');
    const window = await h.http().get('/v1/sessions/s0/window').expect(200);
    expect(JSON.stringify(window.body)).toContain('u0b');
  });

  it('refuses a bound outside 1 to 1,048,576 MiB at start-up, naming the variable', async () => {
    await expect(startService({ env: { SESSION_CACHE_MAX_MB: '0' } })).rejects.toThrow(/SESSION_CACHE_MAX_MB/);
  });
});
