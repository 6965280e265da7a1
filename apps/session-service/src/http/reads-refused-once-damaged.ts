/**
 * Once the read models are found damaged (anywhere: a read, the projector, …; `ReadModelsDamage`),
 * every read of `/v1` (GET, HEAD) answers 503 `read_models_damaged` until the restart that rebuilds
 * them, not only the reads that meet a damaged page: SQLite keeps no checksum of a row's content, so a
 * page overwritten inside a row's text reads back without an error, and such reads answered 200
 * with altered figures or a body that was not JSON after the damage was known (newcomer ncdata69
 * F3). Writes go on (they go to the event store, which is intact); reads of what they wrote wait
 * for the restart. One cheap check per request while nothing is found.
 */
import type { FastifyInstance } from 'fastify';
import type { ReadModelsDamage } from '../observability/read-models-damage';
import { toApiError } from './api-error.filter';

/** Adds the `onRequest` hook of the module doc to `app` (the answer: that of the first damage's error, `ReadModelsDamage.damageError`); call after the key check, so that a request without a valid key is still told so first. */
export function refuseReadsOnceDamaged(app: FastifyInstance, damage: Pick<ReadModelsDamage, 'damageError'>): void {
  app.addHook('onRequest', (request, reply, done) => {
    const found = damage.damageError();
    if (found === null || (request.method !== 'GET' && request.method !== 'HEAD') || !request.url.startsWith('/v1/')) return done();
    // The answer of the read that met it (the damage's kind: damaged, rewritten by another build, altered).
    const { status, body } = toApiError(found);
    void reply.code(status).send(body);
  });
}
