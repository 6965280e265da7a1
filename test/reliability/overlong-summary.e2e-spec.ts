/**
 * A summary longer than the longest text an event may hold (`MAX_TEXT_LENGTH`, characters = Unicode
 * code points) is refused like any unusable reply (DESIGN §3.7): the pass fails with a reason naming
 * both lengths (never the reply's text), no summary is inserted, the old summary stays, nothing is
 * archived, and the auto-compaction backoff counts the failure. Commanded over HTTP, over NATS and
 * automatic passes alike; a reply of exactly the bound is a summary. (Found: a fake model's
 * 2.2 MB reply was stored as the session's summary.)
 */
import {
  AutoCompactionScheduler,
  COMPACTION_COMPLETED,
  COMPACTION_FAILED,
  CONVERSATION_EVENT,
  EVENTS_ARCHIVED,
  POLICY_SET,
  SUMMARY_INSERTED,
  summarizerFromEnv,
} from '@lib/session';
import { useService, type ServiceInUse } from '../support/service-harness';
import { FakeOpenAiServer } from '../support/fake-openai-server';
import { streamOf } from '../support/log-checks';
import { describeWithNats, publishCommand, readStream, uniquePrefix, useNatsSuite, NATS_TEST_URL } from '../support/nats-test';
import { commandSubject, natsNames } from '../../apps/session-service/src/nats/nats-names';

jest.setTimeout(60_000);

const MAX_TEXT = 3000;
const STRATEGY = { type: 'recursive-summarization', maxEventsToKeep: 4, overlapSize: 1 };
const OLD_SUMMARY = 'OLD SUMMARY: the user asked about orders.';
/** `n` characters (code points), a third of them emoji (two UTF-16 code units each): longer than `n` in UTF-16. */
const reply = (n: number) => '😀'.repeat(Math.floor(n / 3)) + 'r'.repeat(n - Math.floor(n / 3));
const refusal = (length: number, bound = MAX_TEXT) =>
  `summarizer failed: reply longer than the longest text an event may hold (${length} characters, MAX_TEXT_LENGTH ${bound})`;

function turns(prefix: string, from: number, count: number): Array<Record<string, unknown>> {
  return Array.from({ length: count }, (_, i) => [
    { id: `${prefix}-u${from + i}`, type: 'user', text: `question ${from + i} about order ORD-${from + i}` },
    { id: `${prefix}-a${from + i}`, type: 'assistant', text: `answer ${from + i}` },
  ]).flat();
}

/** Appends 6 turns and compacts them with {@link OLD_SUMMARY}; then appends 6 more. Returns the old summary's id. */
async function sessionWithSummary(harness: ServiceInUse, fake: FakeOpenAiServer, session: string): Promise<string> {
  await harness
    .http()
    .post(`/v1/sessions/${session}/events`)
    .send({ events: turns(session, 0, 6) })
    .expect(201);
  fake.setDefault(OLD_SUMMARY);
  const first = await harness.http().post(`/v1/sessions/${session}/compactions`).send({ strategy: STRATEGY }).expect(200);
  expect(first.body.outcome).toBe('compacted');
  await harness
    .http()
    .post(`/v1/sessions/${session}/events`)
    .send({ events: turns(session, 6, 6) })
    .expect(201);
  const log = await harness.service.store.readStream(streamOf(session));
  return (log.find((e) => e.type === SUMMARY_INSERTED)!.data as { summaryId: string }).summaryId;
}

/** The compaction decisions after the first compaction, and the window's events. */
async function afterFirstCompaction(harness: ServiceInUse, session: string) {
  const log = await harness.service.store.readStream(streamOf(session));
  const firstDone = log.findIndex((e) => e.type === COMPACTION_COMPLETED);
  const later = log.slice(firstDone + 1).filter((e) => e.type !== CONVERSATION_EVENT && e.type !== POLICY_SET);
  const position = (await harness.service.store.headPosition()).toString();
  const window = await harness.http().get(`/v1/sessions/${session}/window?minPosition=${position}`).expect(200);
  return { later, window: window.body.events as Array<{ id: string; type: string; text?: string }> };
}

describe('a summary over MAX_TEXT_LENGTH (HTTP and automatic passes)', () => {
  const fake = new FakeOpenAiServer();
  beforeAll(() => fake.start());
  const harness = useService(() => ({
    summarizer: summarizerFromEnv({ OPENAI_BASE_URL: fake.url, SUMMARIZER_MAX_RETRIES: '0' }),
    env: { MAX_TEXT_LENGTH: String(MAX_TEXT), AUTO_COMPACTION_MAX_FAILURES: '2', AUTO_COMPACTION_BACKOFF_MS: '3600000' },
  }));
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  it('fails the pass with a reason naming both lengths: no summary inserted, the old summary kept, nothing archived', async () => {
    const oldSummaryId = await sessionWithSummary(harness, fake, 'over');
    const before = (await afterFirstCompaction(harness, 'over')).window;
    fake.setDefault(reply(MAX_TEXT + 1));

    const res = await harness.http().post('/v1/sessions/over/compactions').send({ strategy: STRATEGY }).expect(200);
    expect(res.body.outcome).toBe('failed');
    expect(res.body.failure).toMatchObject({ stage: 'summarize', reason: refusal(MAX_TEXT + 1) });

    const { later, window } = await afterFirstCompaction(harness, 'over');
    expect(later.map((e) => e.type)).toEqual([COMPACTION_FAILED]);
    const failed = later[0].data as { reason: string; archivedIds: string[]; origin: string };
    expect(failed).toMatchObject({ reason: refusal(MAX_TEXT + 1), archivedIds: [], origin: 'command' });
    expect(JSON.stringify(failed)).not.toContain('😀');
    expect(window).toEqual(before);
    expect(window.find((e) => e.type === 'summary')).toMatchObject({ id: oldSummaryId, text: OLD_SUMMARY });
  });

  it('takes a reply of exactly MAX_TEXT_LENGTH characters (more UTF-16 code units) as the summary', async () => {
    await sessionWithSummary(harness, fake, 'at-bound');
    const text = reply(MAX_TEXT);
    expect(text.length).toBeGreaterThan(MAX_TEXT);
    fake.setDefault(text);
    const res = await harness.http().post('/v1/sessions/at-bound/compactions').send({ strategy: STRATEGY }).expect(200);
    expect(res.body.outcome).toBe('compacted');
    const { later, window } = await afterFirstCompaction(harness, 'at-bound');
    expect(later.map((e) => e.type)).toEqual([EVENTS_ARCHIVED, SUMMARY_INSERTED, COMPACTION_COMPLETED]);
    expect((later[1].data as { text: string }).text).toBe(text);
    expect(window.filter((e) => e.type === 'summary').map((e) => e.text)).toEqual([text]);
  });

  it('fails an automatic pass the same way, and the backoff counts it (no model call after K failures)', async () => {
    const scheduler = harness.service.app.get(AutoCompactionScheduler);
    const settle = async () => {
      for (let i = 0; i < 5; i++) {
        await new Promise((r) => setImmediate(r));
        await scheduler.whenIdle();
      }
    };
    const oldSummaryId = await sessionWithSummary(harness, fake, 'auto');
    fake.setDefault(reply(MAX_TEXT + 500));
    fake.reset();
    await harness.http().put('/v1/sessions/auto/policy').send({ strategy: STRATEGY }).expect(200);
    await settle();
    for (let n = 0; n < 5; n++) {
      await harness
        .http()
        .post('/v1/sessions/auto/events')
        .send({ events: turns('auto', 100 + n, 1) })
        .expect(201);
      await settle();
    }
    const { later, window } = await afterFirstCompaction(harness, 'auto');
    // K = AUTO_COMPACTION_MAX_FAILURES = 2 failed automatic passes, one call each; then the session backs off
    expect(later.map((e) => e.type)).toEqual([COMPACTION_FAILED, COMPACTION_FAILED]);
    for (const e of later) expect(e.data).toMatchObject({ origin: 'auto', reason: refusal(MAX_TEXT + 500), archivedIds: [] });
    expect(fake.calls).toBe(2);
    expect(scheduler.backingOff).toBe(1);
    expect(window.filter((e) => e.type === 'summary')).toEqual([expect.objectContaining({ id: oldSummaryId, text: OLD_SUMMARY })]);
  });
});

describe('a summary over the default MAX_TEXT_LENGTH (1,000,000)', () => {
  const fake = new FakeOpenAiServer();
  beforeAll(() => fake.start());
  const harness = useService(() => ({ summarizer: summarizerFromEnv({ OPENAI_BASE_URL: fake.url, SUMMARIZER_MAX_RETRIES: '0' }) }));
  afterAll(() => fake.close());

  it('refuses the 2.2 MB reply that used to be stored as the summary', async () => {
    const oldSummaryId = await sessionWithSummary(harness, fake, 'big');
    fake.setDefault('x'.repeat(2_200_000));
    const res = await harness.http().post('/v1/sessions/big/compactions').send({ strategy: STRATEGY }).expect(200);
    expect(res.body).toMatchObject({ outcome: 'failed', failure: { reason: refusal(2_200_000, 1_000_000) } });
    const { later, window } = await afterFirstCompaction(harness, 'big');
    expect(later.map((e) => e.type)).toEqual([COMPACTION_FAILED]);
    expect(window.find((e) => e.type === 'summary')).toMatchObject({ id: oldSummaryId, text: OLD_SUMMARY });
  });
});

describeWithNats('overlong summary over NATS')('a summary over MAX_TEXT_LENGTH (a compact command over NATS)', () => {
  const fake = new FakeOpenAiServer();
  const prefix = uniquePrefix();
  const names = natsNames(prefix);
  beforeAll(() => fake.start());
  const harness = useService(() => ({
    summarizer: summarizerFromEnv({ OPENAI_BASE_URL: fake.url, SUMMARIZER_MAX_RETRIES: '0' }),
    env: { MAX_TEXT_LENGTH: String(MAX_TEXT), NATS_URL: NATS_TEST_URL, NATS_PREFIX: prefix },
  }));
  const nats = useNatsSuite('overlong summary over NATS', { prefixes: [prefix] });
  afterAll(async () => {
    await nats.close();
    await fake.close();
  });

  it('answers and records the failure with the same reason; the old summary stays', async () => {
    const oldSummaryId = await sessionWithSummary(harness, fake, 'nats');
    fake.setDefault(reply(MAX_TEXT + 1));
    await publishCommand(nats.client.js, commandSubject(prefix, 'default', 'nats', 'compact'), { strategy: STRATEGY }, { msgId: 'overlong-1' });
    const [answer] = await readStream(nats.client, names.resultStream, `${prefix}.results.default.nats`, 1);
    expect(answer.body).toMatchObject({ outcome: 'failed', failure: { reason: refusal(MAX_TEXT + 1) } });
    const { later, window } = await afterFirstCompaction(harness, 'nats');
    expect(later.map((e) => e.type)).toEqual([COMPACTION_FAILED]);
    expect(later[0].data).toMatchObject({ reason: refusal(MAX_TEXT + 1), archivedIds: [] });
    expect(window.find((e) => e.type === 'summary')).toMatchObject({ id: oldSummaryId, text: OLD_SUMMARY });
  });
});
