/**
 * `ReadModelsDamage.report`, the one function every place meeting the read models' damage calls
 * (the HTTP error filter, the NATS command executor, the projector's listener, the decisions feed):
 * whatever it is told, in whatever order, it keeps the first damage (SQLite's message and what met
 * it), logs it once, and ignores everything else.
 */
import fc from 'fast-check';
import { Logger } from '@nestjs/common';
import { EventStoreCorruptError } from '@lib/event-store';
import { ReadModelsDamagedError } from '@lib/session';
import { ReadModelsDamage, type ReadModelsDamageMetBy } from './read-models-damage';

/** An error SQLite would throw for a damaged file (`code` is what the rule reads). */
function sqliteError(code: string, message: string): Error {
  return Object.assign(new Error(message), { name: 'SqliteError', code });
}

const METS: ReadModelsDamageMetBy[] = ['a read', 'a NATS command', 'the projector', 'the decisions feed'];

/** What a caller may report, and whether it is the read models' damage. */
const reported = fc.oneof(
  fc.record({ damage: fc.constant(true), error: fc.string({ minLength: 1 }).map((m) => sqliteError('SQLITE_CORRUPT', m)) }),
  fc.record({ damage: fc.constant(true), error: fc.string({ minLength: 1 }).map((m) => sqliteError('SQLITE_NOTADB', m)) }),
  fc.record({ damage: fc.constant(true), error: fc.string({ minLength: 1 }).map((m) => new ReadModelsDamagedError('SqliteError', m)) }),
  fc.record({
    damage: fc.constant(false),
    error: fc.string().map((m) => new EventStoreCorruptError('events.sqlite', m, sqliteError('SQLITE_CORRUPT', m))),
  }),
  fc.record({ damage: fc.constant(false), error: fc.string().map((m) => sqliteError('SQLITE_BUSY', m)) }),
  fc.record({ damage: fc.constant(false), error: fc.anything() }),
);

describe('ReadModelsDamage.report', () => {
  afterEach(() => jest.restoreAllMocks());

  it('keeps the first damage reported (its message and what met it), logs it once, ignores the rest', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ what: reported, metBy: fc.constantFrom(...METS) }), { maxLength: 12 }), (calls) => {
        const logged: string[] = [];
        jest.spyOn(Logger.prototype, 'error').mockImplementation((line: unknown) => void logged.push(String(line)));
        const damage = new ReadModelsDamage('/srv/data/read-models.sqlite');
        for (const { what, metBy } of calls) expect(damage.report(what.error, metBy)).toBe(what.damage);
        const first = calls.find((c) => c.what.damage);
        const found = damage.damaged();
        if (!first) {
          expect(found).toBeNull();
          expect(logged).toEqual([]);
        } else {
          expect(found?.problem).toBe(
            `the read models file /srv/data/read-models.sqlite is damaged (SQLite: ${(first.what.error as Error).message}, met by ${first.metBy}): reads meeting it answer 503 read_models_damaged, and the projector cannot apply the log to it; restart the service, which moves the file aside and rebuilds it from the log (nothing is lost)`,
          );
          expect(logged).toEqual([found?.problem]);
        }
        jest.restoreAllMocks();
      }),
    );
  });
});
