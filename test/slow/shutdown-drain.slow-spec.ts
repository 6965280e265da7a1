/**
 * SIGTERM under load (a real process, 16 keep-alive clients sending back to back): a request on an
 * open keep-alive connection is answered 503 `shutting_down` with `Connection: close`, a new
 * connection is refused (the port closes when the drain starts), and no client ever sees a reset
 * connection — what the README promises a client.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnService, type ServiceProcess } from '../support/service-process';

jest.setTimeout(120_000);

/** The drain's length (README: "for one second, the drain"). */
const DRAIN_MS = 1000;

describe('SIGTERM with keep-alive clients sending', () => {
  let dir: string;
  let svc: ServiceProcess | undefined;
  afterAll(async () => {
    await svc?.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('given 16 keep-alive clients, when SIGTERM arrives, then every answer during the drain is 503 shutting_down with Connection: close, and the others are refused connections, never a reset during the drain', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drain-'));
    svc = await spawnService({ dataDir: path.join(dir, 'data') });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
    const url = new URL(svc.url);
    let signalledAt = Infinity;
    const answers: { at: number; status: number; connection: string | undefined; code: string | undefined }[] = [];
    const errors: { at: number; code: string }[] = [];
    const get = () =>
      new Promise<void>((resolve) => {
        const req = http.request({ host: url.hostname, port: url.port, path: '/health', agent }, (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (d: string) => (body += d));
          res.on('end', () => {
            let code: string | undefined;
            try {
              code = (JSON.parse(body) as { code?: string }).code;
            } catch {
              code = undefined;
            }
            answers.push({ at: Date.now(), status: res.statusCode!, connection: res.headers.connection, code });
            resolve();
          });
        });
        req.on('error', (err: NodeJS.ErrnoException) => {
          errors.push({ at: Date.now(), code: err.code ?? err.message });
          resolve();
        });
        req.end();
      });
    let running = true;
    const client = async () => {
      while (running) await get();
    };
    const clients = Array.from({ length: 16 }, client);
    await new Promise((resolve) => setTimeout(resolve, 300));
    signalledAt = Date.now();
    const stopped = svc.stop(30_000);
    await stopped;
    // once the port is closed every attempt is refused: a few more, then stop
    await new Promise((resolve) => setTimeout(resolve, 100));
    running = false;
    await Promise.all(clients);
    agent.destroy();

    const refused = answers.filter((a) => a.at > signalledAt && a.status !== 200);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(new Set(refused.map((a) => `${a.status} ${a.code} ${a.connection}`))).toEqual(new Set(['503 shutting_down close']));
    // a new connection from the signal on is refused (nothing sent); none is reset during the drain.
    // Once it is over, idle keep-alive connections are closed: a client stalled through the whole
    // drain (the test process starved of CPU on a loaded machine) can send at that very instant and
    // meet a reset, the race README names ("only a request sent on it at that very instant")
    const resetInDrain = errors.filter((e) => e.code === 'ECONNRESET' && e.at < signalledAt + DRAIN_MS);
    expect(resetInDrain).toEqual([]);
    expect(Object.keys(countBy(errors.map((e) => e.code))).filter((code) => code !== 'ECONNREFUSED' && code !== 'ECONNRESET')).toEqual([]);
    expect(errors.filter((e) => e.code === 'ECONNREFUSED').length).toBeGreaterThanOrEqual(1);
  });
});

function countBy(values: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}
