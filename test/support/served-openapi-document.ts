/**
 * The OpenAPI document a running service serves (`GET /docs/openapi.json`), for specs that read
 * it and ask the same service whether it agrees.
 */
import { useService, type ServiceInUse } from './service-harness';

/** What {@link useServedOpenApiDocument} gives: the service, and the document it served (both inside tests only). */
export interface ServedOpenApiDocument<T> {
  harness: ServiceInUse;
  /** The document as the service served it, parsed. @throws Error outside tests (it is read in `beforeAll`). */
  document(): T;
}

/**
 * Starts a service for the tests of the enclosing `describe` ({@link useService}) and reads its
 * OpenAPI document once in a `beforeAll` (a 200 answer is required), typed as `T` by the caller.
 */
export function useServedOpenApiDocument<T>(): ServedOpenApiDocument<T> {
  const harness = useService();
  let served: T | undefined;
  beforeAll(async () => {
    served = (await harness.http().get('/docs/openapi.json').expect(200)).body as T;
  });
  return {
    harness,
    document() {
      if (served === undefined) throw new Error('useServedOpenApiDocument: the document is read in beforeAll; use it inside a test');
      return served;
    },
  };
}
