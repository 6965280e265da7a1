/**
 * One in-process service against the machine's NATS server under a prefix of its own, for a NATS suite
 * (`describeWithNats` + {@link useNatsSuite}): registers a `beforeAll` that starts capturing log lines, takes a new
 * prefix from `nats` and starts the service with `NATS_URL`, `NATS_PREFIX` and `NATS_ACK_WAIT_MS` 5000 (ms), and an
 * `afterAll` that stops it, closes `nats` (deleting the prefix's streams) and restores the mocks.
 */
import { captureLogLines } from './captured-log-lines';
import type { NatsSuite } from './nats-test';
import { startService, type Harness } from './service-harness';
import { natsNames, type NatsNames } from '../../apps/session-service/src/nats/nats-names';

/** What {@link useNatsService} started: read it inside tests or later hooks. */
export interface NatsService {
  /** The service (throws before `beforeAll` has run). */
  readonly harness: Harness;
  /** Its `NATS_PREFIX`. */
  readonly prefix: string;
  /** Every log line written since `beforeAll` (levels as `captureLogLines` takes them by default). */
  readonly logged: string[];
  /** The NATS subjects and streams of its prefix. */
  names(): NatsNames;
}

/** See the module doc. `nats`: the suite's {@link useNatsSuite}. */
export function useNatsService(nats: NatsSuite): NatsService {
  let harness: Harness | undefined;
  let prefix: string | undefined;
  let logged: string[] = [];
  beforeAll(async () => {
    logged = captureLogLines();
    prefix = nats.prefix();
    harness = await startService({ env: { NATS_URL: 'nats://127.0.0.1:4222', NATS_PREFIX: prefix, NATS_ACK_WAIT_MS: '5000' } });
  });
  afterAll(async () => {
    await harness?.stop();
    await nats.close();
    jest.restoreAllMocks();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useNatsService: the service starts in beforeAll; use it inside a test or a later hook');
    return value;
  };
  return {
    get harness() {
      return started(harness);
    },
    get prefix() {
      return started(prefix);
    },
    get logged() {
      return logged;
    },
    names: () => natsNames(started(prefix)),
  };
}
