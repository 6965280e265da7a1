import * as net from 'node:net';
import { connect } from '@nats-io/transport-node';
import { ConfigurationError } from '../config/configuration-error';
import { isNatsServerUnavailable, natsConnectError } from './nats-connect-error';

/** The error of connecting to `servers` with the real client (no reconnects). */
async function connectFailure(servers: string): Promise<unknown> {
  try {
    const nc = await connect({ servers: servers.split(','), maxReconnectAttempts: 0, timeout: 5000 });
    await nc.close();
  } catch (err) {
    return err;
  }
  throw new Error(`connecting to ${servers} worked`);
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('natsConnectError', () => {
  it('a host that does not resolve: a configuration error naming NATS_URL and the host', async () => {
    const err = natsConnectError(await connectFailure('nohost.invalid'), 'nohost.invalid');
    expect(err).toBeInstanceOf(ConfigurationError);
    expect(err.message).toMatch(/^NATS_URL=nohost\.invalid: host nohost\.invalid not found \(E\w+\): use nats:\/\/host:4222/);
  });

  it('a server that refuses: unavailable (waited for), names NATS_URL and the address and says the service retries; masks a password', async () => {
    const port = await closedPort();
    const url = `nats://svc:s3cret-pw@127.0.0.1:${port}`;
    const failure = await connectFailure(url);
    expect(isNatsServerUnavailable(failure)).toBe(true);
    const err = natsConnectError(failure, url);
    expect(err).not.toBeInstanceOf(ConfigurationError);
    expect(err.message).toBe(
      `NATS_URL=nats://svc:***@127.0.0.1:${port}: connection refused by 127.0.0.1:${port}: start the NATS server (or fix NATS_URL); the service retries until it answers`,
    );
  });

  it('a port that accepts the connection and says nothing (a frozen server, another service): unavailable (waited for), and the message says so rather than "start the NATS server" (newcomer ncops65 F4)', async () => {
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = `nats://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
    try {
      const failure = await (async () => {
        try {
          await (await connect({ servers: [url], maxReconnectAttempts: 0, timeout: 300 })).close();
        } catch (err) {
          return err;
        }
        throw new Error('connecting worked');
      })();
      expect(isNatsServerUnavailable(failure)).toBe(true);
      expect(natsConnectError(failure, url).message).toBe(
        `NATS_URL=${url}: no server answered as a NATS server in time (one that accepts the connection and then says nothing is frozen, or is another service: a wrong port): check that NATS_URL names the client port of a running NATS server (4222 by default); the service retries until one answers`,
      );
    } finally {
      silent.close();
    }
  });

  it('a host that does not resolve is not a server unavailable (it ends the start)', async () => {
    expect(isNatsServerUnavailable(await connectFailure('nohost.invalid'))).toBe(false);
  });
});
