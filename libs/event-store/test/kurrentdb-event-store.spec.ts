import type { StartedTestContainer } from 'testcontainers';
import { KurrentDbEventStore } from '../src/kurrentdb';
import { containerRuntimeUnavailableReason } from './container-runtime';
import { eventStoreContract } from './event-store.contract';

/** KurrentDB 26.0 LTS, the same image as docker-compose.yml. */
const KURRENTDB_IMAGE = 'docker.kurrent.io/kurrent-lts/kurrentdb:26.0.3';

const connectionString = process.env.KURRENTDB_CONNECTION_STRING;
const skipReason = connectionString
  ? null
  : (() => {
      const why = containerRuntimeUnavailableReason();
      return why ? `KurrentDB contract skipped: KURRENTDB_CONNECTION_STRING is not set and ${why}` : null;
    })();

if (skipReason) {
  process.stderr.write(`${skipReason}\n`);
  describe.skip(skipReason, () => {
    it('runs the contract against KurrentDB', () => undefined);
  });
} else {
  let container: StartedTestContainer | undefined;
  eventStoreContract(`KurrentDB (${connectionString ? 'KURRENTDB_CONNECTION_STRING' : 'testcontainers'})`, {
    async setup() {
      if (connectionString) return KurrentDbEventStore.connect(connectionString);
      const { GenericContainer, Wait } = await import('testcontainers');
      container = await new GenericContainer(KURRENTDB_IMAGE)
        .withEnvironment({
          KURRENTDB_INSECURE: 'true',
          KURRENTDB_RUN_PROJECTIONS: 'None',
          KURRENTDB_MEM_DB: 'true',
          KURRENTDB_TELEMETRY_OPTOUT: 'true',
        })
        .withExposedPorts(2113)
        .withWaitStrategy(Wait.forHttp('/health/live', 2113).forStatusCode(204))
        .withStartupTimeout(180_000)
        .start();
      return KurrentDbEventStore.connect(`kurrentdb://${container.getHost()}:${container.getMappedPort(2113)}?tls=false`);
    },
    async teardown() {
      await container?.stop();
    },
  });
}
