import { createHash } from 'node:crypto';
import { Client, type ClientConfig } from 'pg';
import type { HeldClaim } from '../claim.port';
import { EventStoreClosedError, EventStoreUnavailableError } from '../errors';
import { CloseSignal } from './close-signal';
import { connectFailure } from './postgres-errors';

/** Prefix hashed with every claim name: the advisory lock keys of claims, apart from other users of advisory locks. */
const CLAIM_KEY_PREFIX = 'session-memory-compaction claim\u0000';

/**
 * The advisory lock key (a signed 64-bit integer, as decimal text for `pg_try_advisory_lock(bigint)`)
 * of the claim `name`: the first 8 bytes of SHA-256 of a fixed prefix and the name. Two names share
 * a key with odds of about n²/2⁶⁵ for n names claimed at once (a shared key only makes one of them
 * wait: claims are advisory). Pure.
 */
export function claimLockKey(name: string): string {
  return createHash('sha256')
    .update(CLAIM_KEY_PREFIX + name)
    .digest()
    .readBigInt64BE(0)
    .toString();
}

/**
 * `EventStore.tryClaim` on PostgreSQL: session-level advisory locks (`pg_try_advisory_lock`, which
 * never waits), all on one dedicated connection of this process, outside the store's pool (so a
 * claim held through a long model call takes no pooled connection from appends; the server's
 * `max_connections` must allow one more per replica). PostgreSQL drops every lock of a connection
 * when it ends, so a claim never outlives the process, nor a lost connection; after a loss the next
 * `tryClaim` opens a new connection, and a `release()` of a claim of the lost one does nothing.
 * Advisory locks belong to one database: replicas on one database exclude each other, other
 * databases on the server are apart. Behind a connection pooler in transaction mode (pgbouncer
 * `pool_mode = transaction`) session-level locks do not hold: use session mode. Claims of this
 * process exclude each other too (advisory locks are re-entrant on one connection: a name this
 * process holds is refused without asking the server).
 */
export class PostgresClaims {
  /** The dedicated connection (connected or connecting), or null before the first claim and after a loss. */
  private connection: Promise<Client> | null = null;
  /** Set at {@link close}: a claim being asked for then fails at once. */
  private readonly closing = new CloseSignal();
  /**
   * The last statement sent on the dedicated connection (settled or not): each waits for the one
   * before it, so one connection never runs two at once (node-postgres queues them itself, a use it
   * deprecates and pg 9 removes: replicas' claims and releases came together).
   */
  private lastStatement: Promise<unknown> = Promise.resolve();
  /** Lock keys of the claims this process holds (not released yet), so that a second claim of one name here is refused. */
  private readonly held = new Set<string>();

  constructor(
    /** The pool's settings (connection string, connect and answer timeouts); `application_name` gets ` claims`. */
    private readonly config: ClientConfig,
    /** The message of the EventStoreUnavailableError for a driver error. */
    private readonly describeUnavailable: (error: unknown) => string,
  ) {}

  /**
   * See `EventStore.tryClaim`. One round trip on the dedicated connection (two when it must connect first).
   * @throws EventStoreClosedError after {@link close}, and at once when close() is called while it is asked.
   * @throws EventStoreUnavailableError when the server could not be asked.
   */
  async tryClaim(name: string): Promise<HeldClaim | null> {
    if (this.closing.closed) throw new EventStoreClosedError('PostgreSQL');
    const key = claimLockKey(name);
    if (this.held.has(key)) return null;
    // Taken before the query: two claims of one name started together here must not both ask (the second would be granted).
    this.held.add(key);
    let client: Client;
    let got: boolean;
    try {
      // Raced against close(): a connection being opened, or a statement queued here, does not outlive it (a lock
      // granted after that goes with the connection close() ends).
      client = await this.closing.race(this.client());
      const { rows } = await this.closing.race(this.oneAtATime(() => client.query<{ got: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS got', [key])));
      got = rows[0].got;
    } catch (err) {
      this.held.delete(key);
      if (err instanceof EventStoreClosedError) throw err;
      this.drop();
      throw new EventStoreUnavailableError(this.describeUnavailable(err), err);
    }
    if (!got) {
      this.held.delete(key);
      return null;
    }
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        this.held.delete(key);
        // The lock went with a connection lost since: nothing to give up.
        if (this.connection === null || (await this.connection.catch(() => null)) !== client) return;
        try {
          await this.oneAtATime(() => client.query('SELECT pg_advisory_unlock($1::bigint)', [key]));
        } catch {
          // Not told: end the connection, which drops its locks (this process's other claims too: they may then run twice, never stay held).
          this.drop();
        }
      },
    };
  }

  /**
   * Ends the dedicated connection (its claims with it): a claim being asked for fails at once with
   * EventStoreClosedError, a statement running there is cut off (its connection ended). Resolves once the
   * connection is closed (one being opened: once it opened or failed, within the connect timeout).
   */
  async close(): Promise<void> {
    this.closing.close(new EventStoreClosedError('PostgreSQL'));
    const connection = this.connection;
    this.connection = null;
    const client = await connection?.catch(() => null);
    await client?.end().catch(() => undefined);
  }

  /** The dedicated connection, opened when there is none. */
  private client(): Promise<Client> {
    if (this.connection) return this.connection;
    const client = new Client({ ...this.config, application_name: `${this.config.application_name ?? 'session-memory-compaction'} claims` });
    const lost = (): void => {
      if (this.connection === opened) this.connection = null;
    };
    // A connection the server or the network ends must not crash the process: its locks are gone, the next claim reconnects.
    client.on('error', lost);
    client.on('end', lost);
    const opened = client.connect().then(
      () => client,
      (err: unknown) => {
        lost();
        throw connectFailure(err);
      },
    );
    this.connection = opened;
    return opened;
  }

  /** Runs `statement` (one query on the dedicated connection) once every statement sent before it has settled; its own outcome. */
  private oneAtATime<T>(statement: () => Promise<T>): Promise<T> {
    const result = this.lastStatement.then(statement, statement);
    this.lastStatement = result.catch(() => undefined);
    return result;
  }

  /** Forgets the dedicated connection and ends it. */
  private drop(): void {
    const connection = this.connection;
    this.connection = null;
    void connection?.then((c) => c.end()).catch(() => undefined);
  }
}
