/**
 * The fair ceiling of figure 1 (issue 14): the least an HTTP append server on one Node process and
 * SQLite can do. Fastify with its JSON body parser, better-sqlite3 with the event store's pragmas
 * (WAL, `synchronous=FULL`, `secure_delete`) and its group commit (appends queued in one event-loop
 * turn share one `BEGIN IMMEDIATE … COMMIT`, up to 256, each in its own SAVEPOINT), one row per
 * event into the event store's own schema. No validation, no token counting, no projection, no
 * expected-revision check beyond the stream row's upsert. The stored id is `<stream>/<event id>`
 * (ids are unique per session; the schema's UNIQUE(id) is global).
 *
 * `POST /v1/sessions/:sessionId/events` with `{ events: [{ id, type, text, ... }] }` answers 201
 * `{ position }` (the last event's global position, a decimal string, as the service answers).
 */
import Database from 'better-sqlite3';
import Fastify, { type FastifyInstance } from 'fastify';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import { SQLITE_SCHEMA_SQL } from '@lib/event-store';

/** A running minimal server. */
export interface MinimalAppendServer {
  port: number;
  /** The Fastify instance (for in-process requests through `inject`, `bench/append-instructions.ts`). */
  app: FastifyInstance;
  /** Committed transactions and appends since start (appends / transactions = group-commit factor). */
  stats: { transactions: number; appends: number };
  close(): Promise<void>;
}

interface Pending {
  stream: string;
  events: Array<Record<string, unknown>>;
  resolve: (position: bigint) => void;
  reject: (error: unknown) => void;
}

/** Starts the minimal server on 127.0.0.1 (free port) with its database file in `dir`. */
export async function startMinimalAppendServer(dir: string): Promise<MinimalAppendServer> {
  const db = new Database(path.join(dir, 'minimal.sqlite'));
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('secure_delete = ON');
  db.exec(SQLITE_SCHEMA_SQL);
  const revisionOf = db.prepare<[string], { revision: number }>('SELECT revision FROM streams WHERE stream = ?');
  const insert = db.prepare('INSERT INTO events (stream, revision, id, type, data, metadata, created) VALUES (?, ?, ?, ?, ?, ?, ?)');
  const upsert = db.prepare('INSERT INTO streams (stream, revision) VALUES (?, ?) ON CONFLICT (stream) DO UPDATE SET revision = excluded.revision');
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const savepoint = db.prepare('SAVEPOINT op');
  const release = db.prepare('RELEASE op');
  const rollbackTo = db.prepare('ROLLBACK TO op');
  const stats = { transactions: 0, appends: 0 };
  const queue: Pending[] = [];
  let scheduled = false;

  const appendOne = (op: Pending): bigint => {
    let revision = revisionOf.get(op.stream)?.revision ?? -1;
    let position = 0n;
    const created = Date.now();
    for (const e of op.events) {
      revision += 1;
      position = BigInt(
        insert.run(op.stream, revision, `${op.stream}/${String(e.id)}`, String(e.type), JSON.stringify(e), '{"tenantId":"default"}', created).lastInsertRowid,
      );
    }
    upsert.run(op.stream, revision);
    return position;
  };
  const flush = () => {
    const batch = queue.splice(0, 256);
    const outcomes: Array<{ ok: boolean; value: unknown }> = [];
    begin.run();
    for (const op of batch) {
      savepoint.run();
      try {
        outcomes.push({ ok: true, value: appendOne(op) });
        release.run();
      } catch (error) {
        rollbackTo.run();
        release.run();
        outcomes.push({ ok: false, value: error });
      }
    }
    commit.run();
    stats.transactions += 1;
    stats.appends += batch.length;
    batch.forEach((op, i) => (outcomes[i].ok ? op.resolve(outcomes[i].value as bigint) : op.reject(outcomes[i].value)));
  };
  const enqueue = (stream: string, events: Array<Record<string, unknown>>) =>
    new Promise<bigint>((resolve, reject) => {
      queue.push({ stream, events, resolve, reject });
      if (scheduled) return;
      scheduled = true;
      setImmediate(() => {
        scheduled = false;
        while (queue.length > 0) flush();
      });
    });

  const app: FastifyInstance = Fastify({ logger: false, bodyLimit: 1_048_576 });
  app.post<{ Params: { sessionId: string }; Body: { events: Array<Record<string, unknown>> } }>('/v1/sessions/:sessionId/events', async (req, reply) => {
    const position = await enqueue(`session-default.${req.params.sessionId}`, req.body.events);
    reply.code(201);
    return { position: String(position) };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    port: (app.server.address() as AddressInfo).port,
    app,
    stats,
    async close() {
      await app.close();
      while (queue.length > 0) flush();
      db.close();
    },
  };
}
