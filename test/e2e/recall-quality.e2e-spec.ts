/**
 * Recall quality on the shared conversations (issues 14 and 16): 20 queries an agent would send
 * after compaction (a user id, a reservation or payment id from a tool result, a date or id it
 * passed as a tool argument, a flight number deep in a long search result), each with the event
 * expected first: where the value first appears in that session (read off the conversation by
 * hand, message index = event index). All 150 sessions are projected into one read model,
 * interleaved event by event as concurrent sessions are, with the first half of each session
 * archived, so every query runs among 3,916 events and their repeats across sessions.
 */
import { ReadModelStore, SessionProjector, searchRecall } from '@lib/session';
import { RecordedSessionLog } from '../../libs/session/src/read-side/testing/recorded-session-log';
import { loadSessionsFile, sessionEvents } from '../../apps/replay/src/sessions-file';
import { TAU_BENCH_FILE, describeWithShared } from '../support/shared-dir';

/** [session index in the file, query, message index of the expected top hit, what it is]. */
const QUERIES: ReadonlyArray<[number, string, number, string]> = [
  [0, 'mia_li_3668', 3, 'user id given by the user'],
  [10, 'mia_kim_4397', 3, 'user id given by the user'],
  [14, 'chen_lee_6825', 3, 'user id given by the user'],
  [19, 'raj_brown_5782', 5, 'user id given by the user'],
  [24, 'yara_garcia_1905', 7, 'user id given by the user'],
  [26, 'aarav_ahmed_6699', 3, 'user id given by the user (61 events of the corpus hold it)'],
  [27, 'IFOYYZ', 3, 'reservation id given by the user'],
  [15, 'GV1N64', 11, 'reservation id given by the user'],
  [2, 'JG7FMM', 5, 'reservation id in the user profile (tool result), repeated by 6 later events'],
  [3, 'OBUT9V', 7, 'reservation id in the user profile, repeated by 9 later events'],
  [3, 'KA7I60', 7, 'reservation id in the user profile'],
  [4, 'UM3OG5', 5, 'reservation id in the user profile'],
  [28, 'MSJ4OA', 5, 'reservation id in the user profile'],
  [30, 'HSR97W', 5, 'reservation id in the user profile'],
  [13, 'gift_card_4643416', 5, 'payment id in the user profile, repeated by 9 later events'],
  [2, 'credit_card_9525117', 5, 'payment id in the user profile'],
  [0, '2024-05-20', 8, 'date passed as a flight search argument'],
  [17, '2024-05-24', 8, 'date passed as a flight search argument'],
  [26, 'credit_card_7334', 22, 'payment id passed as a booking argument'],
  [0, 'HAT039', 13, 'flight number inside a 2,710-character search result'],
];

describeWithShared('recall quality on the shared conversations: 20 queries keep their expected top hit', TAU_BENCH_FILE, () => {
  const sessions = loadSessionsFile(TAU_BENCH_FILE);
  const store = ReadModelStore.open(':memory:');
  const events = sessions.map((s) => sessionEvents(s.messages));
  const log = new RecordedSessionLog();
  for (let k = 0; events.some((e) => k < e.length); k++) events.forEach((e, i) => k < e.length && log.append(`t${i}`, e[k]));
  events.forEach((e, i) =>
    log.archive(
      `t${i}`,
      `c${i}`,
      e.slice(1, Math.ceil(e.length / 2)).map((x) => x.id),
    ),
  );
  new SessionProjector(store).applyBatch(log.events);
  afterAll(() => store.close());

  it.each(QUERIES)('session %i, q=%s: message %i first (%s)', (session, q, expected) => {
    const expectedEvent = events[session][expected];
    const page = searchRecall(store, { tenantId: 'default', q, sessionId: `t${session}`, limit: 5 });
    expect(page.items[0]).toMatchObject({ eventId: expectedEvent.id, firstMention: true, archived: expected < Math.ceil(events[session].length / 2) });
    expect(page.order).toBe('relevance');
  });

  it('ranks tenant-wide queries by BM25: a value stated in one session only is found there first', () => {
    const page = searchRecall(store, { tenantId: 'default', q: 'credit_card_7334', limit: 5 });
    expect(page.items[0]?.sessionId).toBe('t26');
    expect(page.order).toBe('relevance');
  });
});
