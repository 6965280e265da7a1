/**
 * A throwaway PostgreSQL cluster of its own for fault tests (issue 12): `initdb` into a temporary
 * directory, `pg_ctl` on a free port, stopped and started at will, removed afterwards. The
 * machine's shared server is never touched. As root, the binaries run as the `postgres` user
 * (initdb refuses root) and the directory is handed to that user.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

/** Where the PostgreSQL server binaries are (`PG_BIN`, default the Debian path of PostgreSQL 15). */
export const PG_BIN = process.env.PG_BIN || '/usr/lib/postgresql/15/bin';

/** Null when a throwaway cluster can be made here, else the one-line reason why not. */
export function throwawayPostgresUnavailableReason(): string | null {
  if (!fs.existsSync(path.join(PG_BIN, 'initdb')) || !fs.existsSync(path.join(PG_BIN, 'pg_ctl'))) {
    return `PostgreSQL fault tests skipped: no initdb/pg_ctl in ${PG_BIN} (set PG_BIN)`;
  }
  return null;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Lines of the server's log a failed start's error carries. */
const LOG_LINES_IN_ERROR = 20;

/**
 * `err` (pg_ctl's, which says only "could not start server. Examine the log output.") with the last
 * {@link LOG_LINES_IN_ERROR} lines the server logged during the start appended: the directory holding the log is
 * removed with the failed cluster, so the reason would be lost otherwise (CI, stop 52).
 */
function withServerLog(err: unknown, serverSaid: string): Error {
  const tail = serverSaid.trimEnd().split('\n').slice(-LOG_LINES_IN_ERROR).join('\n');
  const message = `${err instanceof Error ? err.message : String(err)}\nserver log of the failed start:\n${tail || '(empty)'}`;
  return Object.assign(new Error(message), { cause: err });
}

/** Tries of {@link ThrowawayPostgres.create} on free ports whose bind failed: the port was taken between its pick and the start. */
const PORT_TRIES = 5;

/** A running throwaway cluster. */
export class ThrowawayPostgres {
  private constructor(
    readonly dir: string,
    private listenPort: number,
  ) {}

  /** The port it listens on. */
  get port(): number {
    return this.listenPort;
  }

  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication). */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /**
   * Creates the cluster (initdb, no fsync: it is thrown away) and starts it, on `options.port` when
   * given (a test's own port block), else on a free port: picked before `initdb`, it may be taken by
   * the time the server binds it (an outgoing connection of a parallel test gets it from the same
   * ephemeral range; CI saw `could not bind IPv4 address "127.0.0.1": Address already in use`), so
   * such a start is tried again on another free port, up to {@link PORT_TRIES} times.
   * `pickPort`: how a free port is picked (default: the OS's pick of one nothing listens on; a spec
   * gives a taken one first).
   * @throws Error (`pg_ctl`'s, with the server's log of the failed start appended) when the server does not start
   *   for another reason, or on a given port.
   */
  static async create(options: { port?: number; pickPort?: () => Promise<number> } = {}): Promise<ThrowawayPostgres> {
    const pickPort = options.pickPort ?? freePort;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pg-throwaway-'));
    if (process.getuid?.() === 0) execFileSync('chown', ['-R', 'postgres:', dir]);
    const cluster = new ThrowawayPostgres(dir, options.port ?? (await pickPort()));
    cluster.run('initdb', ['-D', path.join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync', '--no-instructions']);
    for (let tried = 1; ; tried++) {
      const logged = cluster.serverLogSize();
      try {
        cluster.start();
        return cluster;
      } catch (err) {
        const serverSaid = cluster.serverLogSince(logged);
        if (options.port !== undefined || tried >= PORT_TRIES || !serverSaid.includes('Address already in use')) {
          fs.rmSync(dir, { recursive: true, force: true });
          throw withServerLog(err, serverSaid);
        }
        cluster.listenPort = await pickPort();
      }
    }
  }

  /** Bytes of the server's log so far (0 before the first start). */
  private serverLogSize(): number {
    const log = path.join(this.dir, 'server.log');
    return fs.existsSync(log) ? fs.statSync(log).size : 0;
  }

  /** What the server logged after its first `from` bytes. */
  private serverLogSince(from: number): string {
    const log = path.join(this.dir, 'server.log');
    return fs.existsSync(log) ? fs.readFileSync(log).subarray(from).toString('utf8') : '';
  }

  /** Starts the server and waits until it accepts connections. */
  start(): void {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`;
    this.run('pg_ctl', ['-D', path.join(this.dir, 'data'), '-o', options, '-l', path.join(this.dir, 'server.log'), '-w', '-t', '60', 'start']);
  }

  /** Stops the server (`fast`: open connections are ended) and waits until it is down. */
  stop(): void {
    this.run('pg_ctl', ['-D', path.join(this.dir, 'data'), '-m', 'fast', '-w', '-t', '60', 'stop']);
  }

  /**
   * Sends `signal` to the server's processes (the postmaster and its children): `SIGSTOP` freezes it with its
   * connections open, as a hung host or a network partition looks to a client; `SIGCONT` resumes it.
   */
  signalAll(signal: 'SIGSTOP' | 'SIGCONT'): void {
    const postmaster = Number(fs.readFileSync(path.join(this.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
    const children = execFileSync('pgrep', ['-P', String(postmaster)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
    for (const pid of [postmaster, ...children]) process.kill(pid, signal);
  }

  /** Stops the server if it runs and removes its directory. */
  destroy(): void {
    try {
      this.signalAll('SIGCONT');
    } catch {
      // not running
    }
    try {
      this.stop();
    } catch {
      // already stopped
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  private run(binary: string, args: string[]): void {
    const command = path.join(PG_BIN, binary);
    const [file, argv] = process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
    execFileSync(file, argv, { stdio: 'pipe', cwd: this.dir, timeout: 90_000 });
  }
}
