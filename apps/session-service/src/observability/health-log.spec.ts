import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import pinoHttp from 'pino-http';
import fc from 'fast-check';
import { Logger } from '@nestjs/common';
import type { EventStore } from '@lib/event-store';
import type { AutoCompactionScheduler, SessionClaims, SessionProjector, SessionReads } from '@lib/session';
import type { ServiceConfig } from '../config/service-config';
import { HealthController } from './health.controller';
import { HealthTransitions } from './health-transitions';
import type { ServiceMetrics } from './metrics';
import { requestLogLevelOptions } from './request-log-level';
import { SummarizerFailureLog } from './summarizer-failure-log';
import { StoreWriteHealth } from './store-write-health';
import { ReadModelsDamage } from './read-models-damage';
import { ErasureOnDisk } from './erasure-on-disk';

/** A Fastify app serving the real HealthController's /health over a store that fails while `store.down`, logging with pino-http and our level options. */
async function healthApp() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  const store = { down: false };
  const controller = new HealthController(
    {
      headPosition: async () => {
        if (store.down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
        return 7n;
      },
    } as unknown as EventStore,
    { state: () => ({ running: true, checkpoint: 7n, lastError: null }) } as unknown as SessionProjector,
    { inProgress: 0, backingOff: 0 } as unknown as AutoCompactionScheduler,
    { commandsWaiting: 0 } as unknown as SessionClaims,
    {} as ServiceMetrics,
    {
      apiKeys: new Map(),
      databaseUrl: 'postgres://x',
      kurrentdbConnectionString: undefined,
      build: { version: '0.1.0', commit: 'unknown', commitSource: 'unknown', nodeVersion: process.version },
    } as unknown as ServiceConfig,
    {} as SessionReads,
    new SummarizerFailureLog(),
    new StoreWriteHealth(),
    new ReadModelsDamage('read-models.sqlite'),
    new ErasureOnDisk('/nonexistent-data-dir', []),
  );
  const logger = pinoHttp({ level: 'debug', ...requestLogLevelOptions('info') }, stream);
  const app = Fastify();
  app.addHook('onRequest', (request, reply, done) => logger(request.raw, reply.raw, () => done()));
  app.get('/health', async (_request, reply) => reply.send(await controller.health(reply)));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  const said: string[] = [];
  const probe = async (): Promise<number> => {
    const before = lines.length;
    const res = await fetch(`http://127.0.0.1:${port}/health`);
    said.push((JSON.parse(await res.text()) as { status: string }).status);
    // pino-http logs on the response's finish: give it a moment to reach the stream
    for (let i = 0; i < 50 && lines.length === before; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    return res.status;
  };
  return { lines, store, probe, said, close: () => app.close() };
}

describe('/health log lines', () => {
  it('answers 200 while the store is down (liveness), logs every probe at debug, and one warn line per change of store state (down and back)', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const app = await healthApp();
    try {
      expect(await app.probe()).toBe(200);
      app.store.down = true;
      for (let i = 0; i < 4; i++) expect(await app.probe()).toBe(200);
      app.store.down = false;
      expect(await app.probe()).toBe(200);
      expect(await app.probe()).toBe(200);
      expect(app.said).toEqual(['ok', 'unavailable', 'unavailable', 'unavailable', 'unavailable', 'ok', 'ok']);

      expect(app.lines.map((l) => [l.level, (l.res as { statusCode: number }).statusCode])).toEqual([
        [20, 200],
        [20, 200],
        [20, 200],
        [20, 200],
        [20, 200],
        [20, 200],
        [20, 200],
      ]);
      for (const line of app.lines) {
        expect(line).not.toHaveProperty('err');
        expect(JSON.stringify(line)).not.toMatch(/stack|failed with status code/);
      }
      const health = warn.mock.calls.map(([line]) => String(line));
      expect(health).toHaveLength(2);
      expect(health[0]).toMatch(/^\/health: the store does not answer \(connect ECONNREFUSED 127\.0\.0\.1:5432\); \/health says unavailable \(still 200\)/);
      expect(health[1]).toMatch(
        /^\/health: the store answers again \(unavailable at 4 probes over \d+\.\d s, from the first that found it down to this one\)$/,
      );
    } finally {
      warn.mockRestore();
      await app.close();
    }
  });
});

describe('HealthTransitions', () => {
  it('gives a line exactly when the store state changes (starting from ok), and cuts a long store error', () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { maxLength: 40 }), (downs) => {
        const transitions = new HealthTransitions();
        let previous = false;
        downs.forEach((down, i) => {
          const line = transitions.observe(down ? 'e'.repeat(10_000) : null, i * 1000);
          expect(line !== null).toBe(down !== previous);
          if (line) expect(line.length).toBeLessThan(400);
          previous = down;
        });
      }),
    );
  });

  it('says a store refusing for good (a damaged or replaced file) answers 503 store_corrupt until the restart (ncrecheck70 F6)', () => {
    const line = new HealthTransitions().observe('the event store file /d/events.sqlite was replaced or removed …', 0, true);
    expect(line).toBe(
      '/health: the store refuses every operation (the event store file /d/events.sqlite was replaced or removed …); /health says unavailable (still 200), writes answer 503 store_corrupt until the service is restarted',
    );
  });
});
