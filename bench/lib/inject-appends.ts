/**
 * The in-process append load of `bench/append-cpu.ts` and `bench/lib/append-instructions-child.ts`:
 * one-event `POST /v1/sessions/load-<k>/events` through an `inject` (Fastify's `inject`: no socket,
 * no HTTP parser), {@link APPEND_LANES} in flight on as many sessions, each event id new, its type
 * and text taken in turn from `texts`.
 */

/** What one in-process request answers (the part the load reads). */
export interface Injected {
  statusCode: number;
  body: string;
}

/** An in-process request: `fastify.inject` (the service's or the ceiling's Fastify instance). */
export type Inject = (request: { method: 'POST'; url: string; headers: Record<string, string>; payload: string }) => Promise<Injected>;

/** Requests in flight at once, each on its own session (as figure 1's 16 clients). */
export const APPEND_LANES = 16;

/**
 * A function that sends `count` appends through `inject` and resolves when all are answered; the
 * event ids go on from one call to the next (`e0`, `e1`, …), so every append of the load writes a
 * new event. @throws Error (rejects) when an append is not answered 201, naming the status and body.
 */
export function injectAppends(inject: Inject, texts: ReadonlyArray<{ type: string; text: string }>): (count: number) => Promise<void> {
  let sent = 0;
  const payload = (): string => {
    const t = texts[sent % texts.length];
    return JSON.stringify({ events: [{ id: `e${sent++}`, type: t.type, text: t.text }] });
  };
  return async (count) => {
    let left = count;
    const lane = async (k: number) => {
      while (left-- > 0) {
        const res = await inject({
          method: 'POST',
          url: `/v1/sessions/load-${k}/events`,
          headers: { 'content-type': 'application/json' },
          payload: payload(),
        });
        if (res.statusCode !== 201) throw new Error(`${res.statusCode} ${res.body}`);
      }
    };
    await Promise.all(Array.from({ length: APPEND_LANES }, (_, k) => lane(k)));
  };
}
