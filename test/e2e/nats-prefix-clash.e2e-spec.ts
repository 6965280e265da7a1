/**
 * Newcomer ncnatsops F4: `NATS_PREFIX=NCNATSOPS` started on a server where a deployment with
 * `NATS_PREFIX=ncnatsops` runs (the same stream names: the prefix upper-cased, `-` as `_`) ended
 * with `failed to start: multiple non-filtered consumers not allowed on workqueue stream` (exit code
 * 1), a raw JetStream error naming neither the other deployment nor the clash. Now, the service
 * process run from the sources against the machine's NATS server: a configuration error (exit code
 * 2) naming the streams the prefix maps to, the other deployment's prefix and consumer, and the fix;
 * the other deployment's streams and consumer are left as they were.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startServiceProcess } from '../support/service-process';
import { describeWithNats, useNatsSuite, NATS_TEST_URL } from '../support/nats-test';
import { natsNames } from '../../apps/session-service/src/nats/nats-names';
import { ensureStreams } from '../../apps/session-service/src/nats/nats-streams';
import { consumersOf } from '../../apps/session-service/src/nats/nats-prefix-clash';

jest.setTimeout(120_000);

describeWithNats('NATS prefix clash')('two NATS_PREFIX values mapping to the same stream names', () => {
  const nats = useNatsSuite('NATS prefix clash');

  afterAll(async () => {
    await nats.close();
  });

  it('the second deployment stops at start with a configuration error naming the clash and the fix (exit code 2)', async () => {
    const other = `${nats.prefix()}-x`;
    const names = natsNames(other);
    await ensureStreams(nats.client.jsm, names, 30_000);
    const mine = other.toUpperCase().replace('-', '_');
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nats-prefix-clash-'));
    const service = startServiceProcess({ dataDir, env: { NATS_URL: NATS_TEST_URL, NATS_PREFIX: mine } });
    try {
      const exit = await Promise.race([service.exited, service.ready.then(() => ({ code: 'started' as const, signal: null }))]);
      expect({ exit, stderr: service.stderr() }).toEqual({
        exit: { code: 2, signal: null },
        stderr:
          `configuration error: NATS_PREFIX=${mine}: it maps to the streams ${names.commandStream}, ${names.resultStream}, ${names.decisionStream} (the prefix upper-cased, - as _), ` +
          `and the server's ${names.commandStream} takes the subjects ${other}.commands.>, not ${mine}.commands.>: ` +
          `it is another deployment's, NATS_PREFIX=${other} (its consumer ${other}-service): prefixes that differ only in letter case or - and _ map to the same stream names: ` +
          `use a NATS_PREFIX whose upper-cased form (- as _) no other deployment on this server has, or NATS_PREFIX=${other} to be a replica of that deployment\n`,
      });
    } finally {
      await service.kill();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
    expect(await consumersOf(nats.client.jsm, names.commandStream)).toEqual([`${other}-service`]);
    expect((await nats.client.jsm.streams.info(names.commandStream)).config.subjects).toEqual([`${other}.commands.>`]);
  });
});
