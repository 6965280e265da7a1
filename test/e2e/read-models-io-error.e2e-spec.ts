/**
 * The read models' file cannot be written for another reason than a full disk (newcomer ncops67 F1): past a file-size
 * limit (`ulimit -f`, as a disk quota or a failing disk does it, SQLite says `disk I/O error`, not `SQLITE_FULL`). Before:
 * the projector stopped at position 9 while the event store acknowledged appends up to 42, every read of them waited out
 * `MAX_WAIT_MS`, and `/health` said `ok` (`event_store_writable 1`) while its write probe, an empty transaction, called
 * the failing store writable every 5 s. Now it is handled as a full disk is: writes refused (nothing written), `/health`
 * unavailable with `readModels.full` saying what fails, readiness 503. The service runs in a child process whose shell
 * sets the limit (Node ignores SIGXFSZ, so a write past it fails with EFBIG).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { call, spawnService, type JsonAnswer, type ServiceProcess } from '../support/service-process';

/** Size limit of every file the service writes, in KiB (`ulimit -f` counts 1,024-byte blocks in bash). */
const FILE_SIZE_LIMIT_KIB = 3000;

/** Text of about `n` characters of distinct words (the word index grows with each). */
const wordsText = (seed: number, n: number) => {
  let text = '';
  for (let i = 0; text.length < n; i++) text += `w${seed}x${i.toString(36)} `;
  return text;
};

describe('the read models cannot be written: their file meets a file-size limit (disk I/O error)', () => {
  jest.setTimeout(180_000);
  let service: ServiceProcess | undefined;
  let dataDir: string;
  afterEach(async () => {
    await service?.kill();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses writes once the projector fails, says so in /health and readiness, and keeps what it acknowledged', async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'read-models-io-error-'));
    service = await spawnService({
      dataDir,
      command: [
        'bash',
        '-c',
        `ulimit -f ${FILE_SIZE_LIMIT_KIB}; exec "$0" -r ts-node/register/transpile-only -r tsconfig-paths/register apps/session-service/src/main.ts`,
        process.execPath,
      ],
      env: { MAX_WAIT_MS: '2000' },
    });
    const acknowledged: string[] = [];
    let refused: JsonAnswer | undefined;
    for (let i = 0; i < 400 && refused === undefined; i++) {
      const id = `e${i}`;
      const answer = await call(service.url, 'POST', '/v1/sessions/io/events', { events: [{ id, type: 'user', text: wordsText(i, 20_000) }] });
      if (answer.status === 201) acknowledged.push(id);
      else refused = answer;
    }
    expect(refused).toBeDefined();
    expect(refused!.status).toBe(503);
    expect(refused!.body).toMatchObject({ code: 'store_unavailable' });

    const health = await call(service.url, 'GET', '/health');
    const body = health.body as { status: string; readModels: { full: string | null }; store: { headPosition: string }; projector: { checkpoint: string } };
    expect(body.status).toBe('unavailable');
    expect(body.readModels.full).toMatch(
      /^the read models cannot be written: reading or writing .*read-models\.sqlite fails \(.*disk I\/O error.*\); they stay at position \d+ until what fails its I\/O is fixed/,
    );
    expect((await call(service.url, 'GET', '/health/ready')).status).toBe(503);
    // The log does not run ahead of what reads can show: at most the appends the projector had not reached when it failed
    // (at least the one it failed on).
    const behind = BigInt(body.store.headPosition) - BigInt(body.projector.checkpoint);
    expect(behind).toBeGreaterThanOrEqual(1n);
    expect(behind).toBeLessThanOrEqual(5n);
    // A read needing it: 503 at once, saying what fails, not a full disk (newcomer ncrecheck67 F1).
    const read = await call(service.url, 'GET', `/v1/sessions/io/window?minPosition=${body.store.headPosition}`);
    expect(read.status).toBe(503);
    expect(read.body).toMatchObject({ code: 'projection_behind' });
    expect((read.body as { message: string }).message).toMatch(
      /^the read models cannot be written: their file's reads or writes fail \(a file-size limit, a disk quota or a failing disk\), so they stay at position \d+/,
    );

    // A write now: refused saying why, nothing written.
    const again = await call(service.url, 'POST', '/v1/sessions/io/events', { events: [{ id: 'late', type: 'user', text: 'short' }] });
    expect(again.status).toBe(503);
    expect(again.body).toMatchObject({ code: 'store_unavailable', mayHaveBeenWritten: false });
    expect((again.body as { message: string }).message).toMatch(/^the read models cannot be written: their file's reads or writes fail/);
    expect(((await call(service.url, 'GET', '/health')).body as typeof body).store.headPosition).toBe(body.store.headPosition);

    // What was acknowledged is in the log (read after a restart without the limit).
    await service.kill();
    service = await spawnService({ dataDir });
    const log = await call(service.url, 'GET', '/v1/sessions/io/events?limit=1000');
    const ids = (log.body as { events: Array<{ eventId?: string }> }).events.map((event) => event.eventId);
    for (const id of acknowledged) expect(ids).toContain(id);
  });
});
