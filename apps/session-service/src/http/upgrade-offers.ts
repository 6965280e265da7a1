/**
 * A request offering a protocol upgrade (`Connection: Upgrade` with `Upgrade: h2c`, as
 * `curl --http2` sends on `http://` URLs, or `Upgrade: websocket`) is answered as HTTP/1.1, the
 * offer ignored (RFC 9110 §7.8 lets a server do so), and its connection closed after the answer
 * (newcomer finding: requests pipelined behind it were never answered, the connection closing at
 * the keep-alive timeout, about 73 s later).
 *
 * Why the close: Node's HTTP parser (llhttp) stops reading a connection after a request that offers
 * an upgrade, whatever the server does with it. With no `'upgrade'` listener on the server, Node
 * hands the request to the service as any other, but the bytes that arrived with it after its end
 * (requests pipelined in the same read) are dropped unparsed, so those requests got no answer. Node
 * 20 has no way to refuse the upgrade before the parser stops (`shouldUpgradeCallback` came in Node
 * 24.9), and an `'upgrade'` listener takes the socket off the HTTP server entirely (a body is
 * then not read at all). `Connection: close` tells the client that nothing after this request is
 * answered on this connection: clients resend the requests they pipelined behind it on a new one
 * (RFC 9112 §9.3.2).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance } from 'fastify';

/**
 * Whether a request with `headers` offers an upgrade as Node's parser reads it (and so stops reading
 * its connection after it): an `Upgrade` header, and `upgrade` among the `Connection` header's
 * comma-separated options (any case). An `Upgrade` header without that option is no offer (RFC 9110
 * §7.8: a sender of `Upgrade` must list it in `Connection`), and Node parses past it.
 */
export function offersUpgrade(headers: Pick<IncomingHttpHeaders, 'upgrade' | 'connection'>): boolean {
  if (headers.upgrade === undefined) return false;
  return (headers.connection ?? '').split(',').some((option) => option.trim().toLowerCase() === 'upgrade');
}

/**
 * Makes `app` answer a request offering an upgrade ({@link offersUpgrade}) as any other, with
 * `Connection: close` (an `onSend` hook: every answer to it, errors included), so that its connection
 * ends after the answer instead of holding the requests pipelined behind it unanswered.
 */
export function closeAfterUpgradeOffers(app: FastifyInstance): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    if (offersUpgrade(request.raw.headers)) void reply.header('connection', 'close');
    done(null, payload);
  });
}
