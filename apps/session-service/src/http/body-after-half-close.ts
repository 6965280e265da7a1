/**
 * A request whose whole body arrived before its client half-closed the connection (a TCP FIN after
 * pipelined requests: `half-close.ts`) is read as any other. body-parser skips the body of a
 * request it takes for finished (on-finished's `isFinished`: its socket no longer readable), and
 * after the FIN the socket is not: a request processed after it (one pipelined behind another,
 * which waits for the answer ahead: `pipelined-in-order.ts`) had its buffered body skipped and was
 * answered 400 `validation_failed` "must be a JSON object".
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/** `value`, bound to `target` when it is a function (a proxy's property read through to its target). */
function boundTo(target: object, value: unknown): unknown {
  return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
}

/**
 * `req` as body-parser is to read it: itself, or, when its body arrived whole (`complete`) and its
 * socket was half-closed since (no longer readable), a view of it whose `socket` reads as readable
 * (everything else is `req`'s, methods bound to it; properties set on the view are set on `req`).
 */
export function readableAfterHalfClose(req: IncomingMessage): IncomingMessage {
  const socket = req.socket as Socket | null;
  if (!req.complete || !socket || socket.readable) return req;
  const readableSocket = new Proxy(socket, { get: (target, key) => (key === 'readable' ? true : boundTo(target, Reflect.get(target, key))) });
  return new Proxy(req, { get: (target, key) => (key === 'socket' ? readableSocket : boundTo(target, Reflect.get(target, key))) });
}
