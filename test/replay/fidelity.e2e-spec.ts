/**
 * Context fidelity (issue 16): the facts derived from a hand-written conversation (values and the
 * events that state them), and a fact planted in the first turn that recall still finds after
 * five compaction passes (in-process service, embedded store; about 7 s).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import { createSessionService, type SessionService } from '../../apps/session-service/src/create-session-service';
import { loadServiceConfig } from '../../apps/session-service/src/config/service-config';
import { extractFacts, factsInText, holdsWords, mentionsFact } from '../../apps/replay/src/fact-extraction';
import { firstCharsOf, measureSession, readFinalWindow } from '../../apps/replay/src/fidelity';
import { readLog, waitForSettled } from '../../apps/replay/src/run-replay';
import type { Schemas, SessionServiceClient } from '@lib/client';
import { createReplayClient, ok } from '../../apps/replay/src/service-client';
import { sessionEvents, splitTurns } from '../../apps/replay/src/sessions-file';

const call = (id: string, name: string, args: Record<string, unknown>) => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } });

/** A short airline conversation: every fact below is written by hand from it. */
const CONVERSATION: Record<string, unknown>[] = [
  { role: 'system', content: 'You are an airline agent. Today is 2024-05-15.' },
  { role: 'user', content: "Hi, I'm Ana Lopez. My user id is ana_lopez_1234 and I want to cancel reservation ZX9Q7B." },
  { role: 'assistant', content: null, tool_calls: [call('c1', 'get_user_details', { user_id: 'ana_lopez_1234' })] },
  {
    role: 'tool',
    tool_call_id: 'c1',
    content: JSON.stringify({
      name: { first_name: 'Ana', last_name: 'Lopez' },
      email: 'ana.lopez@example.com',
      dob: '1990-02-11',
      payment_methods: { gift_card_7781234: { source: 'gift_card', balance: 180, id: 'gift_card_7781234' } },
      membership: 'gold',
      reservations: ['ZX9Q7B'],
    }),
  },
  { role: 'assistant', content: 'Your gift card holds 180 dollars. Shall I cancel ZX9Q7B?' },
  { role: 'user', content: 'Yes. Refund $412.50 to the gift card, please.' },
  { role: 'assistant', content: null, tool_calls: [call('c2', 'cancel_reservation', { reservation_id: 'ZX9Q7B', thought: 'the user 555 confirmed' })] },
  { role: 'tool', tool_call_id: 'c2', content: 'Error: reservation ZX9Q7B has flight HAT229 already flown on 2024-05-14' },
];

describe('fact extraction on a hand-written conversation', () => {
  const facts = extractFacts(CONVERSATION);
  const shape = facts.map((f) => ({ value: f.value, kind: f.kind, messageIndex: f.messageIndex, source: f.source, mentionedIn: f.mentionedIn }));

  it('finds the ids, names, dates, amounts and e-mail stated by the user and the tools, each with the first event that states it', () => {
    expect(shape).toEqual([
      { value: 'Ana Lopez', kind: 'name', messageIndex: 1, source: 'user', mentionedIn: [1] },
      { value: 'ana_lopez_1234', kind: 'id', messageIndex: 1, source: 'user', mentionedIn: [1, 2] },
      { value: 'ZX9Q7B', kind: 'id', messageIndex: 1, source: 'user', mentionedIn: [1, 3, 4, 6, 7] },
      // "Ana" and "Lopez" are first stated inside the user's "Ana Lopez"
      { value: 'Ana', kind: 'name', messageIndex: 1, source: 'user', mentionedIn: [1, 3] },
      { value: 'Lopez', kind: 'name', messageIndex: 1, source: 'user', mentionedIn: [1, 3] },
      { value: 'ana.lopez@example.com', kind: 'email', messageIndex: 3, source: 'tool-result', mentionedIn: [3] },
      { value: '1990-02-11', kind: 'date', messageIndex: 3, source: 'tool-result', mentionedIn: [3] },
      { value: '180', kind: 'amount', messageIndex: 3, source: 'tool-result', mentionedIn: [3, 4] },
      { value: 'gift_card_7781234', kind: 'id', messageIndex: 3, source: 'tool-result', mentionedIn: [3] },
      { value: '$412.50', kind: 'amount', messageIndex: 5, source: 'user', mentionedIn: [5] },
      { value: 'HAT229', kind: 'id', messageIndex: 7, source: 'tool-result', mentionedIn: [7] },
      { value: '2024-05-14', kind: 'date', messageIndex: 7, source: 'tool-result', mentionedIn: [7] },
    ]);
  });

  it('ties each fact to the event where its words first appear, for recall reach: the name Mia first appears in the user id mia_li_3668', () => {
    const conversation: Record<string, unknown>[] = [
      { role: 'system', content: 'You are an airline agent. Mia is a name.' },
      { role: 'user', content: 'My user id is mia_li_3668.' },
      { role: 'assistant', content: null, tool_calls: [call('c1', 'get_user_details', { user_id: 'mia_li_3668' })] },
      { role: 'tool', tool_call_id: 'c1', content: JSON.stringify({ name: { first_name: 'Mia', last_name: 'Li' } }) },
    ];
    const byValue = new Map(extractFacts(conversation).map((f) => [f.value, f]));
    // stated literally first by the tool result, but its words are in the user's id two events earlier (the system prompt does not count)
    expect(byValue.get('Mia')).toMatchObject({ messageIndex: 3, source: 'tool-result', firstHeldIn: 1 });
    expect(byValue.get('mia_li_3668')).toMatchObject({ messageIndex: 1, firstHeldIn: 1 });
    for (const f of facts) expect(f.firstHeldIn).toBe(f.messageIndex); // the hand-written conversation states each fact before any other event holds it
  });

  it('counts a notice (a system message named notice) where the words first appear, and no developer instruction (ncaudit66 F1)', () => {
    const conversation: Record<string, unknown>[] = [
      { role: 'developer', content: 'Users such as mia_li_3668 are premium.' },
      { role: 'system', name: 'notice', content: 'Profile loaded for Mia.' },
      { role: 'user', content: 'My user id is mia_li_3668.' },
      { role: 'assistant', content: null, tool_calls: [call('c1', 'get_user_details', { user_id: 'mia_li_3668' })] },
      { role: 'tool', tool_call_id: 'c1', content: JSON.stringify({ name: { first_name: 'Mia', last_name: 'Li' } }) },
    ];
    const byValue = new Map(extractFacts(conversation).map((f) => [f.value, f]));
    expect(byValue.get('Mia')).toMatchObject({ messageIndex: 4, firstHeldIn: 1 });
    expect(byValue.get('mia_li_3668')).toMatchObject({ messageIndex: 2, firstHeldIn: 2 });
  });

  it('takes nothing from the system prompt, an assistant text, free-text arguments or keys that are not facts', () => {
    const values = facts.map((f) => f.value);
    expect(values).not.toContain('2024-05-15'); // system prompt only
    expect(values).not.toContain('555'); // under "thought"
    expect(values).not.toContain('gold'); // "membership" is not a fact key
    expect(values).not.toContain('gift_card'); // a "source" label
  });

  it('looks for a fact as a whole word: HAT22 is not in HAT229, 180 is not in 1180, ZX9Q7B is in "(ZX9Q7B)."', () => {
    expect(mentionsFact('flight HAT229', 'HAT22')).toBe(false);
    expect(mentionsFact('balance 1180', '180')).toBe(false);
    expect(mentionsFact('cancelled (ZX9Q7B).', 'ZX9Q7B')).toBe(true);
    expect(mentionsFact('id: ana_lopez_1234', 'ana_lopez_1234')).toBe(true);
  });

  it('holds a fact as recall sees words (case, underscores, diacritics), which is what recall reach counts', () => {
    expect(holdsWords('my id is noah_muller_9847', 'Noah')).toBe(true);
    expect(holdsWords('Zoë Müller', 'zoe muller')).toBe(true);
    expect(holdsWords('Noahs ark', 'Noah')).toBe(false);
    expect(factsInText('That is $299, then $1,234.50.')).toEqual([
      { value: '$299', kind: 'amount' },
      { value: '$1,234.50', kind: 'amount' },
    ]);
  });

  it('cuts the archived text at the given number of characters for the "first characters" baseline', () => {
    const events = sessionEvents(CONVERSATION).slice(1);
    const lines = firstCharsOf(events, 120);
    expect(lines.join('\n')).toHaveLength(120);
    expect(lines[0].startsWith("User: Hi, I'm Ana Lopez")).toBe(true);
    expect(firstCharsOf(events, 1_000_000)).toHaveLength(events.length);
  });
});

describe('a fact planted in the first turn, after five compaction passes', () => {
  let service: SessionService;
  let dataDir: string;
  let client: SessionServiceClient;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fidelity-e2e-'));
    service = await createSessionService(loadServiceConfig({ ...process.env, DATA_DIR: dataDir, PORT: '0', API_KEYS: undefined, RATE_LIMIT_PER_MINUTE: '0' }), {
      quiet: true,
    });
    await service.app.listen(0, '127.0.0.1');
    client = createReplayClient(`http://127.0.0.1:${(service.app.getHttpServer().address() as AddressInfo).port}`);
  }, 30_000);

  afterAll(async () => {
    await service?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it.each(['sliding-window', 'recursive-summarization'] as const)(
    'is archived, went through at least 5 passes, and recall answers its event first, ahead of shorter repeats (%s)',
    async (type) => {
      const planted = 'QX7R2M';
      const messages: Record<string, unknown>[] = [
        { role: 'system', content: 'You are a travel agent.' },
        { role: 'user', content: `Please keep my booking code ${planted} in mind.` },
        { role: 'assistant', content: 'Noted.' },
      ];
      for (let t = 1; t <= 7; t++)
        messages.push(
          { role: 'user', content: `Question ${t} about the weather in city number ${t}.` },
          // six short echoes of the code, each ranked above the planted statement by BM25 alone (shorter documents)
          { role: 'assistant', content: t < 7 ? `Answer ${t}: ${planted}.` : `Answer ${t}: it is sunny.` },
        );
      const sessionId = `fidelity-planted-${type}`;
      const strategy: Schemas['StrategyInput'] = type === 'sliding-window' ? { type, maxEvents: 2 } : { type, maxEventsToKeep: 2, overlapSize: 0 };
      const params = { path: { sessionId } };
      await ok(client.PUT('/v1/sessions/{sessionId}/policy', { params, body: { strategy, trigger: null } }));
      for (const turn of splitTurns(messages)) {
        await ok(client.POST('/v1/sessions/{sessionId}/messages', { params, body: { messages: turn as Schemas['OpenAiInputMessage'][] } }));
        // one compaction per turn: wait for each before the next append
        expect(await waitForSettled(client, 30_000)).toBe(true);
      }

      const facts = extractFacts(messages);
      expect(facts.map((f) => [f.value, f.messageIndex])).toEqual([[planted, 1]]);
      const log = (await readLog(client, sessionId)).filter((e) => e.type === 'ConversationEventAppended');
      const { compactions } = await ok(client.GET('/v1/sessions/{sessionId}/compactions', { params }));
      const positions = compactions.filter((c) => c.outcome === 'compacted').map((c) => c.position);
      const window = await readFinalWindow(client, sessionId, 'cl100k_base');
      const [result] = (await measureSession(client, sessionId, facts, log, positions, window)).facts;

      expect(result.passes).toBeGreaterThanOrEqual(5);
      expect(result.archived).toBe(true);
      expect(result.reached).toBe(true);
      expect(result.firstStatementRank).toBe(1);
      // the same, asked directly: the planted user event is the first hit, marked as the session's first mention, then the echoes
      const page = await ok(client.GET('/v1/recall', { params: { query: { q: planted, sessionId, limit: '5' } } }));
      expect(page.items[0]).toMatchObject({ eventId: log[1].eventId, firstMention: true });
      expect(page.items.slice(1).every((h) => h.firstMention === undefined)).toBe(true);
      expect(page.items).toHaveLength(5);
      if (type === 'sliding-window') expect(result.retained).toBe(false); // the window no longer holds it: only recall does
    },
    60_000,
  );
});
