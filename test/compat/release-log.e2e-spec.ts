/**
 * Old logs keep loading (issue 11): the log that release bc761a6 wrote (recorded by
 * `record-release-log.ts` on that commit, with the windows that release served) is written into a
 * fresh store; this release must serve the same windows from it, now and at past revisions, and
 * keep appending to and compacting those sessions.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SqliteEventStore } from '@lib/event-store';
import { startService, type Harness } from '../support/service-harness';

interface RecordedLog {
  recordedFrom: string;
  events: Array<{ streamId: string; id: string; type: string; revision: string; data: unknown; metadata: unknown }>;
  windows: Array<{ sessionId: string; atRevision: number | null; ids: string[]; tokens: number; openai: unknown[] }>;
}

const FIXTURE = path.join(__dirname, 'fixtures', 'release-bc761a6-log.json');

describe('a log written by release bc761a6', () => {
  const log = JSON.parse(fs.readFileSync(FIXTURE, 'utf8')) as RecordedLog;
  let h: Harness;

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'release-log-'));
    const store = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'));
    for (const e of log.events) {
      const revision = BigInt(e.revision);
      await store.appendToStream(e.streamId, [{ id: e.id, type: e.type, data: e.data, metadata: e.metadata }], {
        expectedRevision: revision === 0n ? 'no_stream' : revision - 1n,
      });
    }
    await store.close();
    h = await startService({ dataDir });
  });
  afterAll(async () => {
    await h.stop();
  });

  it('holds sessions with summaries, archived events and a policy', () => {
    const types = new Set(log.events.map((e) => e.type));
    expect([...types].sort()).toEqual(['AutoCompactionPolicySet', 'CompactionCompleted', 'ConversationEventAppended', 'EventsArchived', 'SummaryInserted']);
    expect(log.windows.length).toBeGreaterThanOrEqual(8);
  });

  it.each(log.windows.map((w) => [`${w.sessionId} at ${w.atRevision ?? 'the end'}`, w] as const))('serves the same window: %s', async (_name, w) => {
    const query = w.atRevision === null ? `minPosition=${log.events.length}` : `atRevision=${w.atRevision}`;
    const native = await h.http().get(`/v1/sessions/${w.sessionId}/window?${query}`).expect(200);
    expect({ ids: (native.body.events as Array<{ id: string }>).map((e) => e.id), tokens: native.body.tokens }).toEqual({ ids: w.ids, tokens: w.tokens });
    const openai = await h.http().get(`/v1/sessions/${w.sessionId}/window?format=openai&${query}`).expect(200);
    expect(openai.body.messages).toEqual(w.openai);
  });

  it('keeps appending to and compacting those sessions from their recorded state', async () => {
    const current = log.windows.find((w) => w.sessionId === 'travel' && w.atRevision === null)!;
    const appended = await h
      .http()
      .post('/v1/sessions/travel/events')
      .send({
        events: [
          { id: 'u-new', type: 'user', text: 'One more question.' },
          { id: 'a-new', type: 'assistant', text: 'Sure.' },
        ],
      })
      .expect(201);
    const window = await h.http().get(`/v1/sessions/travel/window?minPosition=${appended.body.position}`).expect(200);
    expect((window.body.events as Array<{ id: string }>).map((e) => e.id)).toEqual([...current.ids, 'u-new', 'a-new']);
    const dry = await h
      .http()
      .post('/v1/sessions/travel/compactions')
      .send({ strategy: { type: 'sliding-window', maxEvents: 2 }, dryRun: true })
      .expect(200);
    expect(dry.body.outcome).toBe('compacted');
    expect([...dry.body.archived, ...dry.body.kept].sort()).toEqual([...current.ids, 'u-new', 'a-new'].sort());
  });
});
