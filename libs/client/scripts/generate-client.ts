/** `npm run client:generate`: regenerates `libs/client/src/openapi-types.ts` from the running service's OpenAPI document. */
import * as fs from 'node:fs';
import { CLIENT_TYPES_FILE, clientTypesSource, fetchServiceOpenApiDocument } from './client-types';

async function main(): Promise<void> {
  const source = clientTypesSource(await fetchServiceOpenApiDocument());
  fs.writeFileSync(CLIENT_TYPES_FILE, source);
  process.stdout.write(`wrote ${CLIENT_TYPES_FILE}\n`);
}

main().catch((err: Error) => {
  process.stderr.write(`client generation failed: ${err.stack ?? err.message}\n`);
  process.exit(1);
});
