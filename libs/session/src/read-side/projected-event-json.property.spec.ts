import fc from 'fast-check';
import { ReadModelStore } from './read-model-store';
import { SessionProjector } from './session-projector';
import { RecordedSessionLog } from './testing/recorded-session-log';
import { CONVERSATION_EVENT } from '../events/session-stream-events';

/**
 * The projector writes a conversation event's JSON three times: the whole data in the log
 * (`session_log.data_json`), its payload and costs in the window (`event_json`, `costs_json`). It
 * serialises the payload and costs once and builds the data's text from them (`objectJson`); the
 * rows must hold exactly what `JSON.stringify` gives for each, whatever the data's members and
 * their order, and whether the data was built in this process or parsed from stored JSON.
 */
const text = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.constantFrom('', 'a"b\\c\n', '\u2028日本語 🙂', '\ud800'));
const event = fc.record(
  {
    id: fc.stringMatching(/^[a-z0-9-]{1,12}$/),
    type: fc.constantFrom('user', 'assistant', 'system'),
    text,
    metadata: fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 }),
  },
  { requiredKeys: ['id', 'type', 'text'] },
);
const data = fc
  .record(
    {
      event,
      costs: fc.record({ chars: fc.nat(), cl100k_base: fc.nat(), o200k_base: fc.nat() }),
      createdAt: fc.constantFrom('2024-05-01T00:00:00.000Z', '2024-05-01T10:00:00+02:00'),
      userId: fc.stringMatching(/^[a-z]{1,6}$/),
      metadata: fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 }),
      '0': fc.jsonValue(),
    },
    { requiredKeys: ['event', 'costs'] },
  )
  // Members in any order (the store keeps the order they were written in).
  .chain((d) =>
    fc
      .shuffledSubarray(Object.keys(d), { minLength: Object.keys(d).length })
      .map((keys) => Object.fromEntries(keys.map((k) => [k, d[k as keyof typeof d]])) as typeof d),
  );

describe('projected event JSON', () => {
  it('the log row holds JSON.stringify(data), the window row JSON.stringify(event) and JSON.stringify(costs), for data as built and as parsed back', () => {
    fc.assert(
      fc.property(fc.array(data, { minLength: 1, maxLength: 6 }), fc.boolean(), (datas, parsed) => {
        const store = ReadModelStore.open(':memory:');
        try {
          const log = new RecordedSessionLog('acme');
          const ids = new Set<string>();
          const kept = datas.filter((d) => !ids.has(d.event.id) && ids.add(d.event.id));
          for (const d of kept) log.record('s1', CONVERSATION_EVENT, parsed ? JSON.parse(JSON.stringify(d)) : d);
          new SessionProjector(store).applyBatch(log.events);
          const logRows = store.db.prepare('SELECT data_json AS json FROM session_log ORDER BY position').all() as Array<{ json: string }>;
          expect(logRows.map((r) => r.json)).toEqual(log.events.map((e) => JSON.stringify(e.data)));
          const windowRows = store.db.prepare('SELECT event_json AS event, costs_json AS costs FROM window_entries ORDER BY revision').all() as Array<{
            event: string;
            costs: string;
          }>;
          expect(windowRows).toEqual(
            log.events.map((e) => {
              const d = e.data as { event: unknown; costs: unknown };
              return { event: JSON.stringify(d.event), costs: JSON.stringify(d.costs) };
            }),
          );
        } finally {
          store.db.close();
        }
      }),
      { numRuns: 150 },
    );
  });
});
