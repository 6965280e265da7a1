/** Injection token of the resolved {@link ServiceConfig}. */
export const SERVICE_CONFIG = Symbol('SERVICE_CONFIG');

/** Injection token of the NATS transport (`NatsTransport`), provided only when `NATS_URL` is set. */
export const NATS_TRANSPORT = Symbol('NATS_TRANSPORT');
