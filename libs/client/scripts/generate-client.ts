/**
 * `npm run client:generate`: regenerates `libs/client/src/openapi-types.ts` from the OpenAPI
 * document of a service it starts in-process on a temporary data directory (no running service is
 * needed or read; no environment variable either). Takes no arguments but `--help` (usage, exit
 * code 0, nothing written); any other argument is refused before anything is written (one line on
 * stderr, exit code 2).
 */
import * as fs from 'node:fs';
import { Command } from 'commander';
import { parseScriptArgumentsOrExit } from '../../../apps/session-service/src/script-command-line';

/** The command line: `--help` only. */
function generateProgram(): Command {
  return new Command()
    .name('client:generate')
    .description(
      "Regenerates libs/client/src/openapi-types.ts (the typed client's types) from the OpenAPI document of a service it starts in-process on a temporary data directory: no running service is needed, none is read. Run it when the HTTP shapes change, and commit the result.",
    )
    .allowExcessArguments(false);
}

async function main(): Promise<void> {
  parseScriptArgumentsOrExit(
    generateProgram(),
    process.argv.slice(2),
    'it takes no arguments but --help; it reads the OpenAPI document of a service it starts itself',
  );
  // Loaded once the arguments are accepted: the service's modules take seconds under ts-node.
  const { CLIENT_TYPES_FILE, clientTypesSource, fetchServiceOpenApiDocument } = await import('./client-types');
  const source = clientTypesSource(await fetchServiceOpenApiDocument());
  fs.writeFileSync(CLIENT_TYPES_FILE, source);
  process.stdout.write(`wrote ${CLIENT_TYPES_FILE}\n`);
}

main().catch((err: Error) => {
  process.stderr.write(`client generation failed: ${err.stack ?? err.message}\n`);
  process.exit(1);
});
