/**
 * Erasure and the NATS streams: a session's content reaches JetStream in the answers of its
 * commands (a compaction answer carries the summary text) and its decisions name its event ids. Erasing the session (`DELETE /v1/sessions/:id`, whichever transport)
 * deletes them from the results and decisions streams, keeps the erasure record on the decisions
 * feed, and leaves other sessions' messages alone; the deleted messages' bytes are overwritten in
 * the server's file storage. This file starts a throwaway `nats-server` of its own (a free port, a
 * temporary JetStream folder it can read back); it skips with one line when no `nats-server`
 * binary is installed (CI always has one).
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { ControlledSummarizer, startService, type Harness } from '../support/service-harness';
import { eventually, natsClient, publishCommand, readStream, uniquePrefix, type NatsTestClient } from '../support/nats-test';
import { NATS_SERVER_BINARY, startThrowawayNats, type ThrowawayNats } from '../support/throwaway-nats';
import { commandSubject, natsNames } from '../../apps/session-service/src/nats/nats-names';
import * as erasure from '../../apps/session-service/src/nats/nats-erasure';

/** Every file under `dir` (recursively) whose bytes contain `needle`, as paths relative to `dir`. */
function filesContaining(dir: string, needle: string): string[] {
  const found: string[] = [];
  const bytes = Buffer.from(needle, 'utf8');
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    if (fs.readFileSync(file).includes(bytes)) found.push(path.relative(dir, file));
  }
  return found;
}

const suite = NATS_SERVER_BINARY ? describe : describe.skip;
if (!NATS_SERVER_BINARY) process.stderr.write('SKIPPED NATS erasure: no nats-server binary installed\n');

suite('erasure removes a session from the NATS streams', () => {
  jest.setTimeout(60_000);
  let nats: ThrowawayNats;
  let nc: NatsConnection;
  let client: NatsTestClient;
  let harness: Harness;
  const prefix = uniquePrefix();
  const names = natsNames(prefix);
  const summarizer = new ControlledSummarizer((r) => `SUMMARY: ${r.toSummarize.join(' | ')}`);

  /** Every message of `stream` (body text and subject), read by sequence. */
  const everyMessage = async (stream: string): Promise<Array<{ subject: string; text: string }>> => {
    const info = await client.jsm.streams.info(stream);
    const out: Array<{ subject: string; text: string }> = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      const m = await client.jsm.streams.getMessage(stream, { seq });
      if (m) out.push({ subject: m.subject, text: m.string() });
    }
    return out;
  };

  beforeAll(async () => {
    nats = await startThrowawayNats('nats-erasure');
    nc = nats.nc;
    const url = nats.url;
    client = await natsClient(nc);
    harness = await startService({ env: { NATS_URL: url, NATS_PREFIX: prefix, NATS_ACK_WAIT_MS: '5000', NATS_ERASE_HANDLED_COMMANDS: 'true' }, summarizer });
  });

  afterAll(async () => {
    await harness?.stop();
    await nats?.stop();
  });

  it('deletes the erased session’s answers (a summary holding its text) and decisions, and keeps its erasure record and other sessions', async () => {
    const secret = `zanzibar-${randomUUID().slice(0, 8)}`;
    const kept = `keepme-${randomUUID().slice(0, 8)}`;
    const conversation = (word: string) => ({
      messages: Array.from({ length: 4 }, (_, i) => [
        { role: 'user', content: `turn ${i}: the code word is ${word}` },
        { role: 'assistant', content: `noted ${i}` },
      ]).flat(),
    });
    const compact = { strategy: { type: 'rolling-summary', keepTurns: 1, summarizeAtTokens: 1 } };
    for (const [session, word] of [
      ['secret', secret],
      ['other', kept],
    ]) {
      await publishCommand(client.js, commandSubject(prefix, 'default', session, 'messages'), conversation(word), { msgId: randomUUID() });
      await publishCommand(client.js, commandSubject(prefix, 'default', session, 'compact'), compact, { msgId: randomUUID() });
    }
    const answers = await readStream(client, names.resultStream, `${prefix}.results.default.secret`, 2);
    expect(answers.map((a) => a.headers.Status)).toEqual(['201', '200']);
    expect(answers[1].body.summary.text).toContain(secret);
    await readStream(client, names.resultStream, `${prefix}.results.default.other`, 2);
    await eventually(async () => (await everyMessage(names.decisionStream)).length === 2, 10_000, 'both decisions on the feed');
    expect((await everyMessage(names.decisionStream)).map((m) => [m.subject, JSON.parse(m.text).type])).toEqual(
      expect.arrayContaining([[`${prefix}.decisions.default.secret`, 'CompactionCompleted']]),
    );

    await harness.http().delete('/v1/sessions/secret').expect(200);

    await eventually(
      async () =>
        (await everyMessage(names.decisionStream)).some((m) => m.subject === `${prefix}.decisions.default.secret` && m.text.includes('SessionErased')),
      10_000,
      'the erasure record on the feed',
    );
    const decisions = await everyMessage(names.decisionStream);
    const results = await everyMessage(names.resultStream);
    expect({ decisions: decisions.filter((m) => m.text.includes(secret)), results: results.filter((m) => m.text.includes(secret)) }).toEqual({
      decisions: [],
      results: [],
    });
    expect(decisions.map((m) => [m.subject, JSON.parse(m.text).type])).toEqual([
      [`${prefix}.decisions.default.other`, 'CompactionCompleted'],
      [`${prefix}.decisions.default.secret`, 'SessionErased'],
    ]);
    expect(results.filter((m) => m.subject === `${prefix}.results.default.secret`)).toEqual([]);
    expect(results.filter((m) => m.text.includes(kept))).toHaveLength(1);

    // On disk: the deleted answers and decisions are overwritten, not only marked deleted.
    const streams = path.join(nats.storeDir, 'jetstream', '$G', 'streams');
    expect({
      results: filesContaining(path.join(streams, names.resultStream), secret),
      decisions: filesContaining(path.join(streams, names.decisionStream), secret),
    }).toEqual({ results: [], decisions: [] });
    expect(filesContaining(path.join(streams, names.resultStream), kept)).not.toEqual([]);
  });

  it('given the feed reaching the erasure record after the session was written again over NATS, then it deletes the erased life’s answers and keeps the new life’s', async () => {
    const erasedWord = `oldlife-${randomUUID().slice(0, 8)}`;
    const newWord = `newlife-${randomUUID().slice(0, 8)}`;
    const subject = `${prefix}.results.default.reborn`;
    const conversation = (word: string) => ({
      messages: Array.from({ length: 3 }, (_, i) => [
        { role: 'user', content: `turn ${i}: the code word is ${word}` },
        { role: 'assistant', content: `noted ${i}` },
      ]).flat(),
    });
    const compact = { strategy: { type: 'rolling-summary', keepTurns: 1, summarizeAtTokens: 1 } };
    const life = async (word: string) => {
      await publishCommand(client.js, commandSubject(prefix, 'default', 'reborn', 'messages'), conversation(word), { msgId: randomUUID() });
      await publishCommand(client.js, commandSubject(prefix, 'default', 'reborn', 'compact'), compact, { msgId: randomUUID() });
    };
    const answers = async () => (await everyMessage(names.resultStream)).filter((m) => m.subject === subject).map((m) => m.text);
    await life(erasedWord);
    await eventually(async () => (await answers()).length === 2, 10_000, 'the first life’s two answers');
    expect((await answers()).filter((text) => text.includes(erasedWord))).toHaveLength(1);

    // The feed is held at the erasure record (a lagging feed), before it deletes anything.
    const eraseCopies = erasure.eraseSessionCopies;
    let reached: () => void = () => undefined;
    const atRecord = new Promise<void>((resolve) => (reached = resolve));
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const held = jest.spyOn(erasure, 'eraseSessionCopies').mockImplementation(async (...args) => {
      if (args[3] === 'reborn') {
        reached();
        await released;
      }
      return eraseCopies(...args);
    });
    try {
      await harness.http().delete('/v1/sessions/reborn').expect(200);
      await atRecord;
      await life(newWord);
      await eventually(async () => (await answers()).length === 4, 10_000, 'the new life’s two answers');
      release();
      await eventually(
        async () =>
          (await everyMessage(names.decisionStream)).some((m) => m.subject === `${prefix}.decisions.default.reborn` && m.text.includes('SessionErased')),
        10_000,
        'the erasure record on the feed',
      );
    } finally {
      release();
      held.mockRestore();
    }
    const left = await answers();
    expect({ erased: left.filter((text) => text.includes(erasedWord)).length, answers: left.length }).toEqual({ erased: 0, answers: 2 });
    expect(left.filter((text) => text.includes(newWord))).toHaveLength(1);
    const streams = path.join(nats.storeDir, 'jetstream', '$G', 'streams');
    expect(filesContaining(path.join(streams, names.resultStream), erasedWord)).toEqual([]);
    expect(filesContaining(path.join(streams, names.resultStream), newWord)).not.toEqual([]);
  });

  it('with NATS_ERASE_HANDLED_COMMANDS=true, leaves no handled command’s text in the command stream’s file, even while the same block holds a command in progress', async () => {
    const streams = path.join(nats.storeDir, 'jetstream', '$G', 'streams');
    const secret = `cmdsecret-${randomUUID().slice(0, 8)}`;
    await harness
      .http()
      .post('/v1/sessions/held/events')
      .send({ events: Array.from({ length: 6 }, (_, i) => ({ id: `e${i}`, type: i % 2 ? 'assistant' : 'user', text: `x ${i}` })) })
      .expect(201);
    const entered = summarizer.hold();
    try {
      const compact = { strategy: { type: 'rolling-summary', keepTurns: 1, summarizeAtTokens: 1 } };
      await publishCommand(client.js, commandSubject(prefix, 'default', 'held', 'compact'), compact, { msgId: randomUUID() });
      await entered;
      await publishCommand(
        client.js,
        commandSubject(prefix, 'default', 'cmdsecret', 'append'),
        { events: [{ type: 'user', text: secret }] },
        { msgId: randomUUID() },
      );
      await readStream(client, names.resultStream, `${prefix}.results.default.cmdsecret`, 1);
      await harness.http().delete('/v1/sessions/cmdsecret').expect(200);
      // The held compaction keeps the block (and its file) alive: a message only acknowledged would stay in it.
      await eventually(async () => (await client.jsm.streams.info(names.commandStream)).state.messages === 1, 10_000, 'only the held command left');
      expect(filesContaining(path.join(streams, names.commandStream), secret)).toEqual([]);
    } finally {
      summarizer.release();
    }
  });
});
