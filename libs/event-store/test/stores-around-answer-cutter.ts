/**
 * The set-up of the PostgreSQL specs that lose or hold back an answer (`postgres-lost-answer`,
 * `postgres-no-answer`): a throwaway database, an {@link AnswerCuttingProxy} in front of it, a
 * store through the proxy and one straight to the server.
 */
import { PostgresEventStore } from '../src/postgres';
import type { PostgresEventStoreOptions } from '../src/postgres/postgres-event-store';
import { AnswerCuttingProxy } from './postgres-answer-cutter';
import { createTestDatabase, type TestDatabase } from './postgres-test-database';

/** What {@link useStoresAroundAnswerCutter} sets up (each usable inside tests only). */
export interface StoresAroundAnswerCutter {
  /** The throwaway database. */
  readonly db: TestDatabase;
  /** The proxy between {@link store} and the server. */
  readonly proxy: AnswerCuttingProxy;
  /** Through the proxy. */
  readonly store: PostgresEventStore;
  /** Straight to the server: what the log holds. */
  readonly direct: PostgresEventStore;
}

/**
 * Before the tests of the enclosing `describe`: creates a database named after `tag`
 * ({@link createTestDatabase}), starts a proxy in front of it, connects a store through the proxy
 * with `storeOptions` and one straight to the server, whose first read sets up the schema before
 * anything is cut or held. After them: closes both stores and the proxy, and drops the database.
 */
export function useStoresAroundAnswerCutter(tag: string, storeOptions: PostgresEventStoreOptions): StoresAroundAnswerCutter {
  let set: { db: TestDatabase; proxy: AnswerCuttingProxy; store: PostgresEventStore; direct: PostgresEventStore } | undefined;
  const get = () => {
    if (!set) throw new Error('useStoresAroundAnswerCutter: set up in beforeAll; use it inside a test');
    return set;
  };
  beforeAll(async () => {
    const db = await createTestDatabase(tag);
    const proxy = await AnswerCuttingProxy.start(db.url);
    const store = PostgresEventStore.connect(proxy.urlFor(db.url), storeOptions);
    const direct = PostgresEventStore.connect(db.url);
    set = { db, proxy, store, direct };
    await direct.headPosition(); // the schema, before anything is cut or held
  });
  afterAll(async () => {
    if (!set) return;
    await set.store.close();
    await set.direct.close();
    await set.proxy.close();
    await set.db.drop();
  });
  return {
    get db() {
      return get().db;
    },
    get proxy() {
      return get().proxy;
    },
    get store() {
      return get().store;
    },
    get direct() {
      return get().direct;
    },
  };
}
