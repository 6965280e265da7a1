/**
 * How the transports tell the write handlers when a write request arrived and whether its client is
 * gone (a {@link WriteAdmission}, checked by `checkWriteAdmission` right before each write). HTTP:
 * arrival is when Node parsed the request's head ({@link stampArrivals}; a request pipelined behind
 * another counts its wait), and the client is gone once its connection is closed. NATS: arrival is
 * when this replica began executing the delivered command; there is no client connection.
 */
import type { IncomingMessage, Server } from 'node:http';
import { admitWrite, type WriteAdmission } from '@lib/session';

/** When each request's head was parsed on this process: `performance.now()` ms. */
const arrivals = new WeakMap<IncomingMessage, number>();

/** Stamps each request of `server` with its arrival time ({@link httpAdmission} reads it). Call once, when the server is made. */
export function stampArrivals(server: Server): void {
  server.on('request', (req: IncomingMessage) => arrivals.set(req, performance.now()));
}

/**
 * Marks `command` (a write command built from the HTTP request `req`) with its arrival (the stamp of
 * {@link stampArrivals}, else now) and `deadlineMs` (`WRITE_DEADLINE_MS`); its client is gone once
 * the request's connection is closed (destroyed: a reset, or closed by the server; a client that
 * only half-closed it, a FIN, still reads its answer). Returns `command`.
 */
export function admittedOverHttp<C extends object>(command: C, req: IncomingMessage, deadlineMs: number): C {
  const socket = req.socket;
  return admitWrite(
    command,
    admission(arrivals.get(req) ?? performance.now(), deadlineMs, () => socket.destroyed),
  );
}

/** Marks `command` (a NATS command this replica executes now) with its arrival (now) and `deadlineMs`. Returns `command`. */
export function admittedOverNats<C extends object>(command: C, deadlineMs: number): C {
  return admitWrite(
    command,
    admission(performance.now(), deadlineMs, () => false),
  );
}

function admission(arrivedAtMs: number, deadlineMs: number, clientGone: () => boolean): WriteAdmission {
  return { arrivedAtMs, deadlineMs, clientGone };
}
