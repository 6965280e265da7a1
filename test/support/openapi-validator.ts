/**
 * Checks real answers against the service's OpenAPI document with Ajv (an independent JSON Schema
 * validator, as a client generated from the document reads them): the route and status must be
 * declared, and the body must match the declared schema (objects the document closes with
 * `additionalProperties: false` refuse any field it does not declare).
 */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';

/** The parts of an OpenAPI document this reads. */
export interface OpenApiDocument {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema?: unknown }> }> }>>;
  components: { schemas: Record<string, unknown> };
}

const DOCUMENT_ID = 'openapi.json';

/** Deep copy of `schema` with its `#/components/…` references pointing into the document added to Ajv. */
function rebased(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(rebased);
  if (schema === null || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [
      key,
      key === '$ref' && typeof value === 'string' && value.startsWith('#/') ? DOCUMENT_ID + value : rebased(value),
    ]),
  );
}

/** Validates answers against one document; collects what does not match. */
export class OpenApiAnswerValidator {
  /** One line per answer the document does not describe (method, route, status, what is wrong, a body excerpt). */
  readonly violations: string[] = [];
  /** Every answer checked: method, route pattern, status, and the error code of an error answer. */
  readonly checked: Array<{ method: string; route: string; status: number; code?: string }> = [];
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly routes: Array<{ route: string; pattern: RegExp }>;

  constructor(private readonly document: OpenApiDocument) {
    this.ajv.addSchema({ $id: DOCUMENT_ID, components: rebased(document.components) as object });
    // Literal routes before templated ones (`/v1/sessions` before `/v1/sessions/{sessionId}`).
    this.routes = Object.keys(document.paths)
      .map((route) => ({ route, pattern: new RegExp(`^${route.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`) }))
      .sort((a, b) => (a.route.match(/\{/g)?.length ?? 0) - (b.route.match(/\{/g)?.length ?? 0));
  }

  /** The route pattern of `pathname` (decoded), or undefined. */
  routeOf(pathname: string): string | undefined {
    return this.routes.find((r) => r.pattern.test(pathname))?.route;
  }

  /** Checks one answer; records a violation when the document does not describe it. */
  check(method: string, pathname: string, status: number, body: unknown): void {
    const route = this.routeOf(pathname);
    const code = (body as { code?: unknown } | null)?.code;
    const excerpt = () => JSON.stringify(body)?.slice(0, 300);
    if (!route) return void this.violations.push(`${method} ${pathname}: no route in the document`);
    const operation = this.document.paths[route][method.toLowerCase()];
    if (!operation) return void this.violations.push(`${method} ${route}: no such operation in the document`);
    this.checked.push({ method, route, status, ...(typeof code === 'string' ? { code } : {}) });
    const response = operation.responses[String(status)];
    if (!response) return void this.violations.push(`${method} ${route}: status ${status} not declared (code ${String(code)}): ${excerpt()}`);
    const schema = response.content?.['application/json']?.schema;
    if (!schema) return;
    const key = `${method} ${route} ${status}`;
    let validate = this.compiled.get(key);
    if (!validate) this.compiled.set(key, (validate = this.ajv.compile(rebased(schema) as object)));
    if (!validate(body)) this.violations.push(`${key}: ${this.ajv.errorsText(validate.errors?.slice(0, 4))}: ${excerpt()}`);
  }

  /** A `fetch` that checks every JSON answer it gets with {@link check} (for the typed client's `fetch` option). */
  readonly fetch: typeof fetch = async (input, init) => {
    const request = input instanceof Request ? input : new Request(input, init);
    const response = await fetch(request);
    if ((response.headers.get('content-type') ?? '').includes('json')) {
      const body: unknown = JSON.parse(await response.clone().text());
      this.check(request.method, decodeURIComponent(new URL(request.url).pathname), response.status, body);
    }
    return response;
  };
}
