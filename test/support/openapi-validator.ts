/**
 * Checks real answers against the service's OpenAPI document with Ajv (an independent JSON Schema
 * validator, as a client generated from the document reads them): the route and status must be
 * declared, and the body must match the declared schema (objects the document closes with
 * `additionalProperties: false` refuse any field it does not declare). Also checks requests
 * against the document's request schemas ({@link OpenApiRequestValidator}).
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

/**
 * Validates request parts against one document's own schemas, as a client generated from the
 * document (or a fuzzer driven by it) would: a parameter's value, a request body. With `strict`
 * (Ajv's default), a schema strict validators refuse (a `maxLength` without a string type) throws
 * when compiled. Formats are not checked (a `date-time`'s rule is its `pattern`).
 */
export class OpenApiRequestValidator {
  private readonly ajv: Ajv2020;

  constructor(
    private readonly document: OpenApiRequestDocument,
    options: { strict: boolean } = { strict: true },
  ) {
    this.ajv = new Ajv2020({ strict: options.strict, allErrors: true, validateFormats: false });
    // The document's components hold schemas under a key that is no JSON Schema keyword.
    this.ajv.addKeyword('components');
    this.ajv.addSchema({ $id: DOCUMENT_ID, components: rebased(document.components) as object });
  }

  /** The compiled schema of parameter `name` (in query or path) of `method route`. @throws Error when there is none, or Ajv's strict mode refuses it. */
  parameter(method: string, route: string, name: string): ValidateFunction {
    const parameter = this.operation(method, route).parameters?.find((p) => p.name === name);
    if (!parameter) throw new Error(`${method} ${route} has no parameter ${name}`);
    return this.ajv.compile(rebased(parameter.schema) as object);
  }

  /** The compiled JSON request body schema of `method route`. @throws Error when there is none, or Ajv's strict mode refuses it. */
  body(method: string, route: string): ValidateFunction {
    const schema = this.operation(method, route).requestBody?.content?.['application/json']?.schema;
    if (!schema) throw new Error(`${method} ${route} has no JSON request body`);
    return this.ajv.compile(rebased(schema) as object);
  }

  /** Every parameter and request body schema of the document, compiled (one line per schema Ajv refuses: in strict mode, what it refuses). */
  strictProblems(): string[] {
    const problems: string[] = [];
    for (const [route, methods] of Object.entries(this.document.paths))
      for (const [method, operation] of Object.entries(methods)) {
        const parts: Array<[string, unknown]> = (operation.parameters ?? []).map((p) => [`${p.in} ${p.name}`, p.schema]);
        const body = operation.requestBody?.content?.['application/json']?.schema;
        if (body) parts.push(['body', body]);
        for (const [part, schema] of parts)
          try {
            this.ajv.compile(rebased(schema) as object);
          } catch (err) {
            problems.push(`${method.toUpperCase()} ${route} ${part}: ${(err as Error).message}`);
          }
      }
    return problems;
  }

  private operation(method: string, route: string): OpenApiRequestOperation {
    const operation = this.document.paths[route]?.[method.toLowerCase()];
    if (!operation) throw new Error(`the document has no operation ${method} ${route}`);
    return operation;
  }
}

/** The request parts of an operation this reads. */
interface OpenApiRequestOperation {
  parameters?: Array<{ in: string; name: string; schema: unknown }>;
  requestBody?: { content?: Record<string, { schema?: unknown }> };
}

/** The parts of an OpenAPI document {@link OpenApiRequestValidator} reads. */
export interface OpenApiRequestDocument {
  paths: Record<string, Record<string, OpenApiRequestOperation>>;
  components: { schemas: Record<string, unknown> };
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
