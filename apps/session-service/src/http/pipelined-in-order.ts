/**
 * Pipelined requests (HTTP/1.1: a client sends its next request on a connection before the answer
 * to the one ahead) are processed one at a time, in the order they came, as they are answered.
 *
 * Node's server hands each request to Fastify as soon as its head is parsed, and queues only the
 * answers: a GET pipelined behind a DELETE read the session before it was erased and answered it
 * (200 with the erased text) after the DELETE's 200, and a GET behind an append answered 404.
 * RFC 9112 §9.3.2 allows a server to process pipelined requests in parallel only when all their
 * methods are safe; the service processes each request of a connection once the answer to the one
 * ahead is written, so a read sees the writes answered before it (as on separate round trips).
 *
 * Node gives a response its socket (`res.socket`, the `'socket'` event) when it is the first one
 * of its connection not yet written whole (`ServerResponse.assignSocket`, at the request when none
 * is ahead, else when the answer ahead has been written: `resOnFinish`). A request waits for that:
 * a request with nothing ahead (every request not pipelined) goes on at once.
 *
 * A request still waiting when its connection closes (the client went away, or the request ahead
 * got no answer because the connection was lost) is not processed: nothing could answer it, and it
 * must not run alongside the request ahead, which may still be in progress. It gets no answer, no
 * request log line, and no count in the metrics (as a request that never arrived).
 *
 * **A held request's body is read while it waits** ({@link readHeldBody}). Node buffers at most
 * 16 KiB (the stream's `highWaterMark`) of the body of a request nobody reads, then stops reading
 * the connection: the requests pipelined behind a held body over that (plus what one read of the
 * socket brought, up to 64 KiB) were parsed, their arrival stamped and their session's life read,
 * only when the held request's turn came (newcomer ncpipeline's F1: a `DELETE` sent before another
 * replica's erasure and rewrite erased the rewritten life 7 s later; an append was written 35.9 s
 * after it was sent, past its 30 s deadline). The hold now lets Node buffer the held body, up to
 * `heldBodyBytes` per connection for all its held requests together (`MAX_BODY_BYTES`: what one
 * request being read may hold anyway); a held body past that budget is read as before, and the heads
 * behind it are read when its turn comes.
 *
 * A held request's `REQUEST_TIMEOUT_MS` counts from when it is let through, not from when its head
 * arrived: a held body past the budget stays unread, and Node's request timeout (which counts from
 * the head) fired for a request that had all arrived, writing a 408 in the place of the answer to
 * the request ahead and closing the connection under it. {@link deferHeldRequestTimeout} puts that
 * timeout off.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** The requests waiting on each connection, each by the function that drops it; one `'close'` listener per connection. */
const waiting = new WeakMap<Socket, Set<() => void>>();

/** The requests held by the hook, each with when it was let through (`Date.now()`, ms), or with what runs then while it waits. */
const held = new WeakMap<IncomingMessage, { releasedAt?: number; onRelease?: () => void }>();

/**
 * Called when Node's request timeout (`ERR_HTTP_REQUEST_TIMEOUT`) fires for `req`, the request whose
 * body Node is reading: if `req` was held by {@link processPipelinedInOrder} and has not yet had
 * `timeoutMs` since it was let through (or is still held), schedules `timedOut` for `timeoutMs`
 * after it is let through, run only if its body is still incomplete and its connection open then,
 * and returns true (the caller must not answer now). Else returns false: the timeout stands.
 * Node checks a request's timeout once only, so the scheduled call is the request's timeout.
 */
export function deferHeldRequestTimeout(req: IncomingMessage, timeoutMs: number, timedOut: () => void): boolean {
  const hold = held.get(req);
  if (!hold || (hold.releasedAt !== undefined && Date.now() - hold.releasedAt >= timeoutMs)) return false;
  const schedule = (releasedAt: number): void => {
    const socket = req.socket;
    const cancel = (): void => clearTimeout(timer);
    const timer = setTimeout(
      () => {
        socket.off('close', cancel);
        if (!req.complete && !socket.destroyed) timedOut();
      },
      releasedAt + timeoutMs - Date.now(),
    );
    timer.unref();
    socket.once('close', cancel);
  };
  if (hold.releasedAt !== undefined) schedule(hold.releasedAt);
  else hold.onRelease = () => schedule(Date.now());
  return true;
}

/** Bytes of body buffering granted to the requests held on each connection ({@link readHeldBody}). */
const grantedBodyBytes = new WeakMap<Socket, number>();

/** The part of a Node `Readable`'s internal state that {@link readHeldBody} changes (Node 20: `_readableState`). */
interface BufferLimit {
  highWaterMark?: unknown;
}

/**
 * Lets Node buffer the body of `req`, a request held behind the answers ahead of it, up to its
 * declared `Content-Length` (a chunked body: up to the budget), if that fits in what is left of the
 * connection's `budgetBytes` for held bodies; then Node goes on reading the connection, so the heads
 * pipelined behind are parsed as they arrive (see the module doc). Raises the request stream's
 * `highWaterMark` (Node's server stops reading a connection when a request's buffered body reaches
 * it; `http.createServer`'s `highWaterMark` option sets it for every request and socket, with no
 * bound per connection) and asks the stream to read on (`read(0)`), in case Node had stopped already.
 * Returns the function that gives the grant back (call when the request is let through or dropped);
 * grants nothing (and returns a no-op) for a body over what is left, one with no body, or when the
 * stream has no such state.
 */
function readHeldBody(req: IncomingMessage, budgetBytes: number): () => void {
  const state = (req as unknown as { _readableState?: BufferLimit })._readableState;
  if (!state || typeof state.highWaterMark !== 'number') return () => undefined;
  const socket = req.socket;
  const left = budgetBytes - (grantedBodyBytes.get(socket) ?? 0);
  const declared = req.headers['content-length'];
  const chunked = declared === undefined && req.headers['transfer-encoding'] !== undefined;
  const wanted = chunked ? left : Number(declared);
  if (!Number.isSafeInteger(wanted) || wanted <= state.highWaterMark || wanted > left) return () => undefined;
  state.highWaterMark = wanted;
  grantedBodyBytes.set(socket, budgetBytes - left + wanted);
  req.read(0);
  let given = false;
  return () => {
    if (given) return;
    given = true;
    grantedBodyBytes.set(socket, (grantedBodyBytes.get(socket) ?? wanted) - wanted);
  };
}

/** Runs `drop` if `socket` closes before the request is let through (one listener per socket, however many wait). */
function dropAtClose(socket: Socket, drop: () => void): Set<() => void> {
  let drops = waiting.get(socket);
  if (!drops) {
    const created = new Set<() => void>();
    drops = created;
    waiting.set(socket, created);
    socket.once('close', () => {
      waiting.delete(socket);
      for (const each of created) each();
    });
  }
  drops.add(drop);
  return drops;
}

/** Options of {@link processPipelinedInOrder}. */
export interface PipelinedInOrderOptions {
  /** Most bytes of held requests' bodies buffered per connection while they wait (`MAX_BODY_BYTES`). */
  heldBodyBytes: number;
}

/**
 * Adds an `onRequest` hook to `app` that holds a request until the answers to the requests ahead of
 * it on its connection are written (see the module doc), reading its body meanwhile within
 * `options.heldBodyBytes` per connection, and drops it (hijacked, never processed) if the connection
 * closes first. Call before every other `onRequest` hook, so that none of them runs (answers,
 * counts, checks a rate limit) for a request still waiting; only the read of a write request's
 * session life (`readLivesOnArrival`, which answers nothing) comes before it.
 */
export function processPipelinedInOrder(app: FastifyInstance, options: PipelinedInOrderOptions): void {
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    const res = reply.raw;
    // Nothing ahead on the connection (the common case): Node gave this answer the socket already.
    if (res.socket) return done();
    const giveBack = readHeldBody(request.raw, options.heldBodyBytes);
    const drop = (): void => {
      giveBack();
      res.off('socket', proceed);
      reply.hijack();
      res.destroy();
      done();
    };
    const hold: { releasedAt?: number; onRelease?: () => void } = {};
    held.set(request.raw, hold);
    const proceed = (): void => {
      giveBack();
      drops.delete(drop);
      hold.releasedAt = Date.now();
      hold.onRelease?.();
      done();
    };
    if (request.raw.socket.destroyed) return drop();
    const drops = dropAtClose(request.raw.socket, drop);
    res.once('socket', proceed);
  });
}
