/**
 * How the transports tell the write handlers when a write request arrived, in which life of its
 * session, and whether its client is gone (a {@link WriteAdmission}, checked by
 * `checkWriteAdmission` right before each write). HTTP: arrival is when Node parsed the request's
 * head ({@link stampArrivals}; a request pipelined behind another counts its wait); its session's
 * life is read as its head is routed ({@link readLivesOnArrival}), before its body is read and
 * before the requests ahead of it on its connection are answered, except that a request behind an
 * erasure of its own session on its connection reads it once that erasure is answered (pipelined
 * `DELETE` then `POST` is written in the new life, as on separate round trips); the client is gone
 * once its connection is closed. NATS: arrival is when this replica began executing the delivered
 * command, and its life is read when this replica received it ({@link admittedOverNats}); there is
 * no client connection.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { admitWrite } from '@lib/session';
import { tenantOf } from '../auth/api-key.guard';
import { SESSION_ID_PATTERN } from '../http/request-schemas';

/** When each request's head was parsed on this process: `performance.now()` ms. */
const arrivals = new WeakMap<IncomingMessage, number>();

/** The reads of the session's life started as each write request was routed ({@link readLivesOnArrival}). */
const livesAtArrival = new WeakMap<IncomingMessage, Promise<bigint>>();

/** The erasures (`DELETE` of a session) not yet answered on each connection, by {@link sessionOf}: settled once answered. */
const erasuresAhead = new WeakMap<Socket, Map<string, Promise<void>>>();

/**
 * What a route's write does to its session's life, in its Fastify route config (Nest's `@RouteConfig`
 * on the handler, key {@link SESSION_LIFE_CONFIG}): `write` writes in the life it arrived in
 * (appends, the policy), `erasure` ends it (`DELETE`).
 */
export type SessionLifeRole = 'write' | 'erasure';

/** The route config key of a route's {@link SessionLifeRole}: `@RouteConfig({ [SESSION_LIFE_CONFIG]: 'write' })`. */
export const SESSION_LIFE_CONFIG = 'sessionLife';

/** What {@link readLivesOnArrival} reads with. */
export interface LivesOnArrivalOptions {
  /** Key → tenant (`API_KEYS`; empty in open development mode), to name the request's tenant as the key check will. */
  apiKeys: ReadonlyMap<string, string>;
  /**
   * Reads the life session `sessionId` of `tenantId` was in at `atMs` (ms since the epoch, `Date.now()` when the read
   * starts: the request's arrival, or the answer of an erasure ahead of it on its connection): `readSessionLifeAt` on the
   * handlers' store, so a read that ends after another replica's erasure still names the life the request arrived in;
   * `role` `erasure` (a `DELETE`) does not wait for the record of an erasure interrupted before it (it finishes it).
   */
  readLife: (tenantId: string, sessionId: string, atMs: number, role: SessionLifeRole) => Promise<bigint>;
}

/** One key per tenant and session id (neither holds a NUL). */
function sessionOf(tenantId: string, sessionId: string): string {
  return `${tenantId}\u0000${sessionId}`;
}

/**
 * Adds an `onRequest` hook to `app` that starts reading the session's life for every request of a
 * route with a {@link SessionLifeRole} as soon as it is routed (see the module doc); the handler's
 * `WriteAdmission` takes that read ({@link admittedOverHttp}). It answers nothing and reads nothing
 * for a request its key check will refuse (no or an unknown key) or whose session id is not valid
 * (answered 400 later). Must be added before `processPipelinedInOrder`, whose hook holds a pipelined
 * request's later hooks until the answers ahead are written.
 */
export function readLivesOnArrival(app: FastifyInstance, options: LivesOnArrivalOptions): void {
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const role = (request.routeOptions.config as { [SESSION_LIFE_CONFIG]?: SessionLifeRole } | undefined)?.[SESSION_LIFE_CONFIG];
    if (role) startLifeRead(request, reply, role, options);
    done();
  });
}

function startLifeRead(request: FastifyRequest, reply: FastifyReply, role: SessionLifeRole, options: LivesOnArrivalOptions): void {
  let tenantId: string;
  try {
    tenantId = tenantOf(request, options.apiKeys);
  } catch {
    return;
  }
  const sessionId = (request.params as { sessionId?: unknown } | undefined)?.sessionId;
  if (typeof sessionId !== 'string' || !SESSION_ID_PATTERN.test(sessionId)) return;
  const socket = request.raw.socket;
  const key = sessionOf(tenantId, sessionId);
  let ahead = erasuresAhead.get(socket);
  const erasureAhead = ahead?.get(key);
  const life = erasureAhead
    ? erasureAhead.then(() => options.readLife(tenantId, sessionId, Date.now(), role))
    : options.readLife(tenantId, sessionId, Date.now(), role);
  // Awaited by the handler; a request refused before it (or never processed) leaves no unhandled rejection.
  life.catch(() => undefined);
  livesAtArrival.set(request.raw, life);
  if (role !== 'erasure') return;
  if (!ahead) erasuresAhead.set(socket, (ahead = new Map<string, Promise<void>>()));
  const answered = new Promise<void>((resolve) => {
    reply.raw.once('finish', resolve);
    reply.raw.once('close', resolve);
  });
  const erasures = ahead;
  erasures.set(key, answered);
  void answered.then(() => {
    if (erasures.get(key) === answered) erasures.delete(key);
  });
}

/** Stamps each request of `server` with its arrival time ({@link admittedOverHttp} reads it). Call once, when the server is made. */
export function stampArrivals(server: Server): void {
  server.on('request', (req: IncomingMessage) => arrivals.set(req, performance.now()));
}

/**
 * Marks `command` (a write command built from the HTTP request `req`) with its arrival (the stamp of
 * {@link stampArrivals}, else now), the life its session was in then (the read of
 * {@link readLivesOnArrival}, else none: the handler reads it) and `deadlineMs` (`WRITE_DEADLINE_MS`);
 * its client is gone once the request's connection is closed (destroyed: a reset, or closed by the
 * server; a client that only half-closed it, a FIN, still reads its answer). Returns `command`.
 */
export function admittedOverHttp<C extends object>(command: C, req: IncomingMessage, deadlineMs: number): C {
  const socket = req.socket;
  return admitWrite(command, {
    arrivedAtMs: arrivals.get(req) ?? performance.now(),
    deadlineMs,
    clientGone: () => socket.destroyed,
    lifeAtArrival: livesAtArrival.get(req),
    deadlineCountedFrom: HTTP_DEADLINE_COUNTED_FROM,
  });
}

/**
 * What the write deadline of an HTTP request counts from, as a `request_expired` message says it: its head's
 * arrival, so every wait after it counts, the client's own (a body still arriving) as much as the service's.
 */
export const HTTP_DEADLINE_COUNTED_FROM =
  "when this replica received the request's head: the time its body took to arrive counts, as does any wait behind requests ahead of it on its connection or behind other writes to its session";

/**
 * Marks `command` (a NATS command this replica executes now) with its arrival (now), `deadlineMs`
 * (`WRITE_DEADLINE_MS`; undefined: no deadline) and `lifeAtArrival`, the read of its session's life
 * made when this replica received it (undefined: the handler reads it). Returns `command`.
 */
export function admittedOverNats<C extends object>(command: C, deadlineMs: number | undefined, lifeAtArrival: Promise<bigint> | undefined): C {
  return admitWrite(command, {
    arrivedAtMs: performance.now(),
    deadlineMs: deadlineMs ?? Number.POSITIVE_INFINITY,
    clientGone: () => false,
    lifeAtArrival,
    deadlineCountedFrom: 'when this replica began executing the command',
  });
}
