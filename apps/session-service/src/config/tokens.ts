/** Injection token of the resolved {@link ServiceConfig}. */
export const SERVICE_CONFIG = Symbol('SERVICE_CONFIG');
