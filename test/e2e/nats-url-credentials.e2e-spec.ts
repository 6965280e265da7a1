/**
 * Credentials written in `NATS_URL` are sent (`nats-credentials.ts`): `nats://user:password@host`
 * (percent-decoded) against a server with a user, and `nats://token@host` against one with a
 * token. Before, the NATS client ignored the user part of a server URL, the server refused the
 * connection and the start failed (`the server refused the credentials (Authorization Violation)`).
 * Credentials both in `NATS_URL` and in `NATS_USER` are refused at start, by name.
 *
 * Against throwaway `nats-server`s; skips with one line when no `nats-server` binary is installed.
 */
import { startService, type Harness } from '../support/service-harness';
import { uniquePrefix } from '../support/nats-test';
import { NATS_SERVER_BINARY, startThrowawayNatsWith, type ThrowawayNats } from '../support/throwaway-nats';

const suite = NATS_SERVER_BINARY ? describe : describe.skip;
if (!NATS_SERVER_BINARY) process.stderr.write('SKIPPED NATS URL credentials: no nats-server binary installed\n');

/** A password with characters a URL's user part must percent-encode (`@`, `/`, `%`), and a `:`. */
const PASSWORD = 'p@ss/w:rd%1';
const TOKEN = 's3cret-t@ken';

suite('credentials in NATS_URL', () => {
  jest.setTimeout(120_000);
  const servers: ThrowawayNats[] = [];
  let withUser: ThrowawayNats;
  let withToken: ThrowawayNats;

  beforeAll(async () => {
    withUser = await startThrowawayNatsWith(
      'nats-url-user',
      (listen, storeDir) =>
        `listen: ${listen}\nauthorization { user: svc, password: ${JSON.stringify(PASSWORD)} }\njetstream { store_dir: ${JSON.stringify(storeDir)} }\n`,
      { user: 'svc', pass: PASSWORD },
    );
    servers.push(withUser);
    withToken = await startThrowawayNatsWith(
      'nats-url-token',
      (listen, storeDir) => `listen: ${listen}\nauthorization { token: ${JSON.stringify(TOKEN)} }\njetstream { store_dir: ${JSON.stringify(storeDir)} }\n`,
      { token: TOKEN },
    );
    servers.push(withToken);
  });

  afterAll(async () => {
    for (const s of servers) await s.stop();
  });

  /** Starts the service with `natsUrl`, expects its NATS connection up without an error, then stops it. */
  async function expectConnected(natsUrl: string): Promise<void> {
    let harness: Harness | undefined;
    try {
      harness = await startService({ env: { NATS_URL: natsUrl, NATS_PREFIX: uniquePrefix() } });
      const health = (await harness.http().get('/health').expect(200)).body as { nats: unknown };
      expect(health.nats).toMatchObject({ connection: 'connected', error: null });
    } finally {
      await harness?.stop();
    }
  }

  it('nats://user:password@host (the password percent-encoded) connects to a server with that user', async () => {
    await expectConnected(withUser.url.replace('nats://', `nats://svc:${encodeURIComponent(PASSWORD)}@`));
  });

  it('nats://token@host connects to a server with that token', async () => {
    await expectConnected(withToken.url.replace('nats://', `nats://${encodeURIComponent(TOKEN)}@`));
  });

  it('a bare user:password@host:port, and a list whose other server carries no credentials, connect too', async () => {
    await expectConnected(`svc:${encodeURIComponent(PASSWORD)}@${withUser.url.replace('nats://', '')}, ${withUser.url}`);
  });

  it('credentials in NATS_URL and NATS_USER/NATS_PASSWORD both: the start is refused by name, the password masked', async () => {
    const url = withUser.url.replace('nats://', 'nats://svc:hunter2@');
    await expect(startService({ env: { NATS_URL: url, NATS_USER: 'svc', NATS_PASSWORD: PASSWORD, NATS_PREFIX: uniquePrefix() } })).rejects.toThrow(
      `NATS_URL=${withUser.url.replace('nats://', 'nats://svc:***@')}: carries credentials and NATS_USER or NATS_PASSWORD is set too: give the credentials in one place: remove them from NATS_URL, or unset NATS_USER and NATS_PASSWORD`,
    );
  });
});
