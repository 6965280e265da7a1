/**
 * The spliced answers of the window and the log (`SessionReads.windowJson`/`logJson`, built from
 * the stored JSON bytes of each event) are the same bytes as `JSON.stringify` of the parsed answers
 * (`window`/`log`), for content that is easy to get wrong when JSON is spliced: unicode beyond the
 * BMP, lone surrogates (stored escaped), quotes, backslashes, control and separator characters,
 * tool calls and results in parts, summaries, archived events, client metadata with `__proto__`
 * and integer-like keys, decision events, and pages that end before the log does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '@lib/event-store';
import type { SessionEvent } from '@lib/compaction';
import { CONVERSATION_EVENT, type ConversationEventData, type EstimatorName } from '../events/session-stream-events';
import { ReadModelStore } from '../read-side/read-model-store';
import { SessionProjector } from '../read-side/session-projector';
import { assistant, costs, RecordedSessionLog, system, user } from '../read-side/testing/recorded-session-log';
import { AcknowledgedPositions } from '../write-side/acknowledged-positions';
import type { SessionSettings } from '../write-side/auto-compaction';
import { SessionNotFoundError } from '../errors';
import { SessionReads } from './session-reads';

const ESTIMATORS: EstimatorName[] = ['cl100k_base', 'o200k_base', 'chars'];
const TRICKY = 'quotes " and \\" backslash \\ newline \n tab \t nul \u0000 bell \u0007 del \u007f separators \u2028\u2029 </script> ';
const UNICODE = 'émoji 😀👩‍👩‍👧 ideographs 中文字符 combining é RTL مرحبا astral 𝒳 BOM \ufeff';
const LONE = 'lone high \ud800 then x, lone low \udc00 at the end \udbff';

function conversation(event: SessionEvent, extra: Partial<ConversationEventData> = {}): ConversationEventData {
  return { event, costs: costs(event.id.length * 10 + 3), createdAt: '2024-05-01T00:00:00.000Z', ...extra };
}

/** A session with every tricky kind of content, a compaction (archived events, a summary), a failed one and a policy. */
function trickyLog(): RecordedSessionLog {
  const log = new RecordedSessionLog();
  log.append('s', system('sys', `You are helpful. ${TRICKY}`));
  log.append('s', user('u1', `${UNICODE} ${LONE}`));
  log.append('s', assistant('a1', null, [['grep', '{"pattern":"pel\\"ican","path":"ü/😀"}']]));
  log.append('s', { id: 't1', type: 'tool', responses: [{ toolCallId: 'call-a1-0', name: 'grep', data: 'a"b\\c', dataParts: ['a"', 'b\\c'] }], name: 'grep' });
  log.append('s', { id: 'u2', type: 'user', text: 'ab', textParts: ['a', 'b'], name: 'ali"ce' });
  log.append('s', { id: 'n1', type: 'system', text: `notice ${LONE}`, notice: true });
  log.append('s', { id: 'r1', type: 'assistant', text: null, refusal: `no ${TRICKY}` });
  // Client metadata is stored verbatim: a __proto__ key, integer-like keys (ordered first by JavaScript), numbers.
  const metadata = JSON.parse('{"b":1,"__proto__":{"x":"y"},"10":"ten","2":"two","nested":[1.5,-0,1e21,null,true,{"":""}],"s":"\\ud83d"}') as Record<
    string,
    unknown
  >;
  log.record('s', CONVERSATION_EVENT, conversation(user('u3', `metadata ${UNICODE}`), { metadata, userId: 'alice' }));
  log.record('s', CONVERSATION_EVENT, { event: user('u4', null), costs: costs(4) });
  log.archive('s', 'c1', ['u1', 'a1', 't1']);
  log.summary('s', 'c1', 'u2', `summary ${TRICKY}${UNICODE}${LONE}`, { coveredIds: ['u1', 'a1', 't1'] });
  log.completed('s', 'c1', ['u2']);
  log.failed('s', 'c2');
  log.policy('s');
  // Over 64 KiB: the parsed window decodes it by transcoding (decodeUtf8).
  log.append('s', user('big', `${TRICKY}${UNICODE}${LONE}`.repeat(1500)));
  log.append('s', user('u5', 'last'));
  return log;
}

describe('SessionReads: spliced window and log answers', () => {
  let dir: string;
  let eventStore: SqliteEventStore;
  let projector: SessionProjector;
  let reads: SessionReads;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'reads-json-'));
    eventStore = SqliteEventStore.open(join(dir, 'events.sqlite'), { pollIntervalMs: 20 });
    projector = new SessionProjector(ReadModelStore.open(join(dir, 'read-models.sqlite')), {
      retryDelayMs: 5,
      maxRetryDelayMs: 20,
      commitIntervalMs: 0,
      worker: false,
    });
    projector.start(eventStore);
    const settings = { maxWaitMs: 30_000 } as SessionSettings & { maxWaitMs: number };
    reads = new SessionReads(eventStore, projector.store, projector, settings, new AcknowledgedPositions());
    let position = 0n;
    for (const e of trickyLog().events) {
      position = (await eventStore.appendToStream(e.streamId, [{ id: e.id, type: e.type, data: e.data, metadata: e.metadata }])).position;
    }
    await reads.waitFor(position);
  }, 60_000);
  afterAll(async () => {
    await projector.stop();
    projector.store.close();
    await eventStore.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(ESTIMATORS)('answers the window (format events, estimator %s) with the bytes of JSON.stringify of the parsed answer', async (estimator) => {
    const options = { format: 'events' as const, estimator };
    const parsed = await reads.window('default', 's', options);
    const spliced = await reads.windowJson('default', 's', options);
    expect(Buffer.isBuffer(spliced)).toBe(true);
    expect((spliced as Buffer).toString('utf8')).toBe(JSON.stringify(parsed));
    expect(JSON.parse((spliced as Buffer).toString('utf8'))).toEqual(parsed);
    // The content is there: a summary with its compaction, archived events gone, lone surrogates kept.
    const events = (parsed as { events: Array<{ id: string; compactionId?: string; text?: string }> }).events;
    expect(events.map((e) => e.id)).toEqual(['sys', 'summary-c1', 'u2', 'n1', 'r1', 'u3', 'u4', 'big', 'u5']);
    expect(events[1].compactionId).toBe('c1');
    expect(events[1].text).toContain(LONE);
  });

  it('answers the window in format openai, or at a past revision, as before (an object)', async () => {
    for (const options of [
      { format: 'openai' as const, estimator: 'cl100k_base' as const },
      { format: 'events' as const, estimator: 'chars' as const, atRevision: 3n },
    ]) {
      expect(await reads.windowJson('default', 's', options)).toEqual(await reads.window('default', 's', options));
    }
  });

  it.each([
    [0n, 1000],
    [0n, 3],
    [2n, 5],
    [9n, 1],
    [15n, 100],
    [99n, 10],
  ])('answers the log from revision %s, limit %s, with the bytes of JSON.stringify of the parsed answer', async (fromRevision, limit) => {
    const parsed = await reads.log('default', 's', fromRevision, limit);
    const spliced = await reads.logJson('default', 's', fromRevision, limit);
    expect(spliced.toString('utf8')).toBe(JSON.stringify(parsed));
    expect(JSON.parse(spliced.toString('utf8'))).toEqual(parsed);
  });

  it('keeps archived flags, decision events and verbatim metadata in the spliced log', async () => {
    const page = JSON.parse((await reads.logJson('default', 's', 0n, 1000)).toString('utf8')) as {
      events: Array<{ eventId?: string; type: string; archived?: boolean; archivedBy?: string; data: { metadata?: Record<string, unknown> } }>;
    };
    expect(page.events.find((e) => e.eventId === 'u1')).toMatchObject({ archived: true, archivedBy: 'c1' });
    expect(page.events.map((e) => e.type)).toEqual(expect.arrayContaining(['EventsArchived', 'SummaryInserted', 'CompactionCompleted', 'CompactionFailed']));
    const metadata = page.events.find((e) => e.eventId === 'u3')!.data.metadata!;
    expect(Object.keys(metadata)).toEqual(['2', '10', 'b', '__proto__', 'nested', 's']);
    expect(Object.getOwnPropertyDescriptor(metadata, '__proto__')?.value).toEqual({ x: 'y' });
  });

  it('answers 404 for an unknown session or another tenant, like the parsed answers', async () => {
    await expect(reads.windowJson('default', 'nope', { format: 'events', estimator: 'chars' })).rejects.toBeInstanceOf(SessionNotFoundError);
    await expect(reads.logJson('other', 's', 0n, 10)).rejects.toBeInstanceOf(SessionNotFoundError);
  });
});
