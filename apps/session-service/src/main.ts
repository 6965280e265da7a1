/**
 * Starts the service: `npm start`. Configuration from the environment (see README); prints the
 * URL, the API docs URL, the store in use, and whether it runs in open development mode: as
 * plain lines with `LOG_FORMAT=pretty` (a terminal), as JSON log lines (pino's shape, level info,
 * whatever `LOG_LEVEL` says) with `LOG_FORMAT=json`, so that stdout holds nothing but JSON.
 */
import pino from 'pino';
import { loadServiceConfig } from './config/service-config';
import { createSessionService } from './create-session-service';
import { eventStoreKind } from './config/event-store-config';

async function main(): Promise<void> {
  let config;
  try {
    config = loadServiceConfig();
  } catch (err) {
    process.stderr.write(`configuration error: ${(err as Error).message}\n`);
    process.exit(2);
  }
  const service = await createSessionService(config);
  await service.app.listen(config.port, config.host);
  const address = service.app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${port}`;
  const storeLine = {
    kurrentdb: 'KurrentDB (KURRENTDB_CONNECTION_STRING)',
    postgres: `PostgreSQL (DATABASE_URL); read models in ${config.dataDir}`,
    sqlite: `embedded SQLite in ${config.dataDir}`,
  }[eventStoreKind(config)];
  // The "listening on" line last: whoever waits for it (tests, scripts) has seen the others.
  const lines = [
    `store: ${storeLine}; summarizer: ${service.summarizer.identity.kind} (${service.summarizer.identity.model})`,
    config.apiKeys.size === 0
      ? 'open development mode: no API_KEYS configured, every request is tenant "default"'
      : `API keys required for /v1 (${config.apiKeys.size} configured)`,
    `API docs: ${url}/docs`,
    `session memory compaction service listening on ${url}`,
  ];
  if (config.natsUrl)
    lines.push(
      `NATS: commands on ${config.natsPrefix}.commands.>, results on ${config.natsPrefix}.results.>, decisions on ${config.natsPrefix}.decisions.> (${config.natsUrl})`,
    );
  if (config.logFormat === 'pretty') process.stdout.write(lines.join('\n') + '\n');
  else {
    const banner = pino({ level: 'info' }, pino.destination({ dest: 1, sync: true }));
    for (const line of lines) banner.info(line);
  }
}

main().catch((err: Error) => {
  process.stderr.write(`failed to start: ${err.message}\n`);
  process.exit(1);
});
