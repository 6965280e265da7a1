/**
 * A throwaway `nats-server` for tests that need settings the machine's shared server does not have
 * (e.g. a larger `max_payload`) or that read the server's JetStream files back: started on a free
 * port with a temporary JetStream folder, stopped and removed by {@link ThrowawayNats.stop}. The
 * shared server is never touched.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { connect, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node';
import { eventually } from './nats-test';

/** Path of the installed `nats-server` binary, or undefined when none is installed (suites then skip with one line). */
export const NATS_SERVER_BINARY = ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'].find((p) => fs.existsSync(p));

/** A running throwaway server and a connection to it. */
export interface ThrowawayNats {
  /** `nats://127.0.0.1:<port>`. */
  url: string;
  /** A connection opened once the server accepted one (closed by {@link stop}). */
  nc: NatsConnection;
  /** The JetStream store folder (`<tmp>/js`): streams' files are under `jetstream/$G/streams/<name>`. */
  storeDir: string;
  /** Closes the connection, stops the server (SIGTERM) and removes its folder. */
  stop(): Promise<void>;
  /** Kills the server (SIGKILL: an outage) and resolves once it has exited; its folder and port stay for {@link restart}. */
  kill(): Promise<void>;
  /** Starts the server again on the same port and JetStream folder (after {@link kill}). */
  restart(): void;
  /** Sends `signal` to the server (`SIGSTOP`: it freezes with its connections open, as in a partition; `SIGCONT` after). */
  signal(signal: NodeJS.Signals): void;
}

/** Starts of {@link startThrowawayNatsWith} on picked ports whose server exited before accepting a connection. */
const PORT_TRIES = 5;

/** The throwaway server exited before it accepted a connection (e.g. its port was taken). */
class ExitedBeforeAcceptingError extends Error {
  constructor(code: number) {
    super(`the throwaway nats-server exited (code ${code}) before it accepted a connection`);
  }
}

/** A loopback port nothing listens on now (the OS's pick, released at once): for a server started later on it. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/**
 * Starts a throwaway server with JetStream (`extraConfig`: more lines of its configuration file,
 * e.g. `max_payload: 8MB`) on `port` (default: a free one, see {@link freePort}) and waits up to
 * 20 s for it to accept a connection.
 * @throws Error when no `nats-server` is installed ({@link NATS_SERVER_BINARY}) or it never accepts one.
 */
export function startThrowawayNats(label: string, extraConfig = '', port?: number): Promise<ThrowawayNats> {
  return startThrowawayNatsWith(
    label,
    (listen, storeDir) =>
      `listen: ${listen}\n${extraConfig}${extraConfig.endsWith('\n') || !extraConfig ? '' : '\n'}jetstream { store_dir: ${JSON.stringify(storeDir)} }\n`,
    undefined,
    port,
  );
}

/**
 * Starts a throwaway server with the configuration `config(listen, storeDir)` makes (`listen`:
 * `127.0.0.1:<port>`, by default a free port; `storeDir`: a temporary JetStream folder), e.g. an example
 * configuration with its port and folder replaced; `credentials` for the connection it opens (a
 * configuration with users; `tls` with the CA of a server with TLS). Waits up to 20 s for it to accept that connection; if it never
 * does, kills the server and removes its folder before throwing.
 * @throws Error when no `nats-server` is installed ({@link NATS_SERVER_BINARY}) or it never accepts one.
 */
export async function startThrowawayNatsWith(
  label: string,
  makeConfig: (listen: string, storeDir: string) => string,
  credentials?: Pick<ConnectionOptions, 'user' | 'pass' | 'token' | 'tls'>,
  port?: number,
): Promise<ThrowawayNats> {
  if (!NATS_SERVER_BINARY) throw new Error('no nats-server binary installed');
  const binary = NATS_SERVER_BINARY;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${label}-`));
  const storeDir = path.join(dir, 'js');
  const config = path.join(dir, 'nats.conf');
  let server!: ChildProcess;
  let url = '';
  let nc: NatsConnection | undefined;
  // A port picked here may be taken before the server binds it (an outgoing connection of a parallel test
  // gets it from the same ephemeral range): a server that exits before it accepts is started again on another.
  for (let tried = 1; ; tried++) {
    const listen = port ?? (await freePort());
    fs.writeFileSync(config, makeConfig(`127.0.0.1:${listen}`, storeDir));
    server = spawn(binary, ['-c', config], { stdio: 'ignore' });
    url = `nats://127.0.0.1:${listen}`;
    const started = server;
    try {
      await eventually(
        async () => {
          if (started.exitCode !== null) throw new ExitedBeforeAcceptingError(started.exitCode);
          try {
            nc = await connect({ servers: url, timeout: 1000, ...credentials });
            return true;
          } catch {
            return false;
          }
        },
        20_000,
        'the throwaway nats-server to accept connections',
      );
      break;
    } catch (err) {
      // Never leave the server running (a configuration whose credentials do not match, a server that hangs).
      server.kill('SIGKILL');
      if (err instanceof ExitedBeforeAcceptingError && port === undefined && tried < PORT_TRIES) continue;
      fs.rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }
  return {
    url,
    nc: nc!,
    storeDir,
    async stop() {
      await nc?.close();
      server.kill('SIGTERM');
      fs.rmSync(dir, { recursive: true, force: true });
    },
    async kill() {
      if (server.exitCode !== null || server.signalCode !== null) return;
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGKILL');
      await exited;
    },
    restart() {
      server = spawn(NATS_SERVER_BINARY, ['-c', config], { stdio: 'ignore' });
    },
    signal(signal) {
      server.kill(signal);
    },
  };
}
