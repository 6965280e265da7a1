/**
 * Damage to the read models (`read-models.sqlite`) found while the service runs: a read that meets
 * a damaged page is answered 503 `read_models_damaged` (api-error.filter.ts), or the projector
 * cannot apply the log to the file (`SessionProjectorState.readModelsDamaged`), and from then on
 * `/health` says `unavailable` with `readModels.damaged` naming the file and the remedy,
 * `/health/ready` answers 503 `read_models_damaged`, `/metrics` `read_models_damaged 1`, and one
 * error line is logged. It stays so until the restart the remedy asks for (the start moves the file
 * aside and rebuilds it from the log: damaged-read-models.ts); nothing is lost, the log is intact.
 */
import { Logger } from '@nestjs/common';
import { EventStoreCorruptError, isSqliteCorrupt } from '@lib/event-store';

/** The damage found, for `/health` (`readModels.damaged`). */
export interface ReadModelsDamageFound {
  /** What was found and what to do: the file, SQLite's message, the remedy (a restart). */
  problem: string;
  /** When a read first met it (ISO-8601). */
  at: string;
}

/** Remembers the first damage to the read models a read met (see the module doc). */
export class ReadModelsDamage {
  private readonly logger = new Logger('ReadModels');
  private found: ReadModelsDamageFound | null = null;

  /** `file`: the read models' path (`DATA_DIR/read-models.sqlite`), named in the problem. */
  constructor(private readonly file: string) {}

  /**
   * Records `error` (any error a request ended with) when it is SQLite saying a file is damaged
   * ({@link isSqliteCorrupt}: the event store wraps its own in {@link EventStoreCorruptError}, so
   * any other is the read models'):
   * the first such error is kept and logged once at error; later ones change nothing.
   */
  observe(error: unknown): void {
    if (this.found || error instanceof EventStoreCorruptError || !isSqliteCorrupt(error)) return;
    this.record(`SQLite: ${(error as Error).message}, met by a read`);
  }

  /**
   * Records the projector's failure `lastError` (its message, e.g. `SqliteError: database disk image
   * is malformed`) when its state says the read models are damaged; as {@link observe} otherwise.
   */
  projectorFailed(lastError: string): void {
    if (this.found) return;
    this.record(`${lastError}, met by the projector`);
  }

  private record(cause: string): void {
    this.found = {
      problem: `the read models file ${this.file} is damaged (${cause}): reads meeting it answer 503 read_models_damaged, and the projector cannot apply the log to it; restart the service, which moves the file aside and rebuilds it from the log (nothing is lost)`,
      at: new Date().toISOString(),
    };
    this.logger.error(this.found.problem);
  }

  /** The damage found since the start (null while no read met any). */
  damaged(): ReadModelsDamageFound | null {
    return this.found;
  }
}
