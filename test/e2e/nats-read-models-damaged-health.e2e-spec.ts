/**
 * Damaged read models met over NATS are recorded as over HTTP: a command ending with SQLite saying
 * the read models file is damaged is answered 503 `read_models_damaged`, and from then on `/health`
 * says `unavailable` with `readModels.damaged` (met by a NATS command), `/health/ready` answers 503
 * `read_models_damaged`, `/metrics` `read_models_damaged 1`. Before, only the HTTP error filter
 * recorded it: over NATS the command was answered 503 while `/health` said ok. The damage is SQLite's
 * own error (`SQLITE_NOTADB`) thrown where the command runs, as the HTTP spec
 * (read-models-damaged-health.e2e-spec.ts) throws it where reads run. The decisions feed, whose
 * checkpoint is in the read models, reports the damage it meets the same way (before: its pause
 * showed in `nats.decisionFeed.lastError` only). Against the machine's NATS
 * server (a prefix of this file's own); skipped with one line without it.
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CommandBus } from '@nestjs/cqrs';
import { startService, type Harness } from '../support/service-harness';
import { expectDamageShown, sqliteDamageError } from '../support/read-models-damage';
import { captureLogLines } from '../support/captured-log-lines';
import { NATS_TEST_URL, describeWithNats, publishCommand, readStream, uniquePrefix, useNatsSuite } from '../support/nats-test';
import { commandSubject, natsNames, resultSubject } from '../../apps/session-service/src/nats/nats-names';
import { DECISION_FEED_CHECKPOINT } from '../../apps/session-service/src/nats/decision-feed-publisher';

jest.setTimeout(60_000);

describeWithNats('read models damaged over NATS')('read models found damaged over NATS', () => {
  const names = natsNames(uniquePrefix());
  const feedNames = natsNames(uniquePrefix());
  let harness: Harness | null = null;
  const nats = useNatsSuite('read models damaged over NATS', { quiet: true, prefixes: [names.prefix, feedNames.prefix] });

  afterEach(async () => {
    jest.restoreAllMocks();
    await harness?.stop();
    if (harness) fs.rmSync(harness.dataDir, { recursive: true, force: true });
    harness = null;
  });
  afterAll(() => nats.close());

  it('answers 503 read_models_damaged and /health says unavailable with readModels.damaged (met by a NATS command), /health/ready 503, /metrics 1', async () => {
    harness = await startService({
      dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'rm-damaged-nats-')),
      env: { NATS_URL: NATS_TEST_URL, NATS_PREFIX: names.prefix },
    });
    const http = harness.http;
    expect((await http().get('/health')).body).toMatchObject({ status: 'ok', readModels: { damaged: null } });

    const damage = sqliteDamageError(harness.dataDir);
    const lines = captureLogLines(['error']);
    jest.spyOn(harness.service.app.get(CommandBus), 'execute').mockRejectedValue(damage);
    await publishCommand(
      nats.client.js,
      commandSubject(names.prefix, 'default', 'damaged', 'append'),
      { events: [{ id: 'u1', type: 'user', text: 'met the damage' }] },
      { msgId: randomUUID() },
    );
    const [answer] = await readStream(nats.client, names.resultStream, resultSubject(names.prefix, 'default', 'damaged'), 1);
    expect({ status: answer?.headers.Status, code: answer?.body.code }).toEqual({ status: '503', code: 'read_models_damaged' });

    const { problem } = await expectDamageShown(http, harness.dataDir, 'a NATS command');
    expect(problem).toContain('(SQLite: file is not a database, met by a NATS command)');
    expect(lines.filter((line) => line.startsWith('the read models file '))).toEqual([problem]);
  });

  it('shows it too when the decisions feed meets it writing its checkpoint (met by the decisions feed)', async () => {
    harness = await startService({
      dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'rm-damaged-feed-')),
      env: { NATS_URL: NATS_TEST_URL, NATS_PREFIX: feedNames.prefix },
    });
    const http = harness.http;
    const turns = Array.from({ length: 6 }, (_, i) => [
      { id: `u${i}`, type: 'user', text: `question ${i}` },
      { id: `a${i}`, type: 'assistant', text: `answer ${i}` },
    ]).flat();
    await http().post('/v1/sessions/fed/events').send({ events: turns }).expect(201);
    const damage = sqliteDamageError(harness.dataDir);
    captureLogLines(['warn', 'error']);
    // Only the feed's checkpoint meets the damage: the projector's rows and checkpoint are written as before.
    const readModels = harness.service.readModels;
    const writeCheckpoint = readModels.writeCheckpoint.bind(readModels);
    jest.spyOn(readModels, 'writeCheckpoint').mockImplementation((name, ...rest) => {
      if (name === DECISION_FEED_CHECKPOINT) throw damage;
      return writeCheckpoint(name, ...rest);
    });
    await http()
      .post('/v1/sessions/fed/compactions')
      .send({ strategy: { type: 'turn-window', maxTurns: 2 } })
      .expect(200);
    const { body, problem } = await expectDamageShown(http, harness.dataDir, 'the decisions feed');
    expect(problem).toContain('(SQLite: file is not a database, met by the decisions feed)');
    // The projector was not the one to meet it.
    expect(body).toMatchObject({ projector: { lastError: null } });
  });
});
