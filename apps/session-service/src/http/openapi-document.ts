/**
 * The OpenAPI 3.1 document served at `/docs/openapi.json`: routes from the controllers' decorators,
 * component schemas from the zod registry of `response-schemas` (so answers, their validation in
 * the contract tests, the document and the generated client in `libs/client` share one source).
 */
import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { API_KEY_HEADER_SCHEME } from '../auth/api-key.guard';
import type { BuildIdentity } from '../config/build-identity';
import { apiComponentSchemas } from './response-schemas';
import { withResponseHeaders } from './openapi-response-headers';
import { withPathParameterRules } from './openapi-path-parameters';
import { withRequestIdParameter } from './openapi-request-id-parameter';
// Registers the request-only schemas (StrategyInput, OpenAiInputMessage) in the registry.
import './openapi-schemas';

/**
 * Builds the document for an initialised-or-not Nest application. Its `info.version` is the release
 * `build` names (`config.build.version`: the service's `package.json` version, `unknown` when it
 * cannot be read), the value `/health` reports as `version`, so a client reading either learns the
 * same release. The generated client's types (`libs/client`) hold no `info`, so a release changes no
 * generated file.
 */
export function buildOpenApiDocument(app: INestApplication, build: Pick<BuildIdentity, 'version'>): OpenAPIObject {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setOpenAPIVersion('3.1.0')
      .setTitle('Session memory compaction service')
      .setDescription(
        'Append agent session events, compact them with a strategy, read the active window, search recall, audit every compaction. Every GET operation also answers HEAD (the same status and headers, no body); HEAD operations are not listed. An optional query parameter sent empty (`limit=`, or `limit` without `=`) counts as absent, whatever its schema says of an empty string, except the filters that name a session, user or compaction (`sessionId`, `userId`, `compactionId`: minLength 1), which refuse it 400.',
      )
      .setVersion(build.version)
      .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'API key', description: 'one of API_KEYS (when configured)' })
      .addApiKey(
        { type: 'apiKey', in: 'header', name: 'X-Api-Key', description: 'one of API_KEYS (when configured), for clients that cannot send Authorization' },
        API_KEY_HEADER_SCHEME,
      )
      .build(),
  );
  document.components = { ...document.components, schemas: { ...document.components?.schemas, ...apiComponentSchemas() } };
  return withRequestIdParameter(withPathParameterRules(withResponseHeaders(document)));
}
