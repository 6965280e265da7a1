/**
 * Damage to the read models (`read-models.sqlite`) found while the service runs, wherever it is met:
 * a read or an HTTP command (answered 503 `read_models_damaged`, api-error.filter.ts), a NATS command
 * (the same answer, nats-command-executor.ts), the projector applying the log, on the event loop or
 * in its worker thread (`SessionProjector.onReadModelsDamage`), the decisions feed writing its
 * checkpoint; also read models another build of the service rewrote under this one (a missing table
 * or column, the file at another schema version: {@link ReadModelsDamage.classify}). Each calls {@link ReadModelsDamage.report}, which applies the one rule
 * (`isReadModelsDamage`); from the first damage on `/health` says `unavailable` with
 * `readModels.damaged` naming the file and the remedy, `/health/ready` answers 503
 * `read_models_damaged`, `/metrics` `read_models_damaged 1`, and one error line is logged. It stays
 * so until the restart the remedy asks for (the start moves the file aside and rebuilds it from the
 * log: damaged-read-models.ts); nothing is lost, the log is intact.
 */
import { Logger } from '@nestjs/common';
import {
  asReadModelsReplaced,
  isReadModelsDamage,
  READ_MODEL_SCHEMA_VERSION,
  ReadModelsAlteredError,
  ReadModelsReplacedError,
  type ReadModelStore,
} from '@lib/session';

/** The damage found, for `/health` (`readModels.damaged`). */
export interface ReadModelsDamageFound {
  /** What was found and what to do: the file, SQLite's message, what met it, the remedy (a restart). */
  problem: string;
  /** When it was first met (ISO-8601). */
  at: string;
}

/** What met the damage, named in {@link ReadModelsDamageFound.problem}. */
export type ReadModelsDamageMetBy = 'a read' | 'a NATS command' | 'the projector' | 'the decisions feed';

/** Remembers the first damage to the read models met anywhere in the service (see the module doc). */
export class ReadModelsDamage {
  private readonly logger = new Logger('ReadModels');
  private found: ReadModelsDamageFound | null = null;
  /** The error {@link found} was made from (what a read refused for it answers: `reads-refused-once-damaged.ts`). */
  private foundError: unknown = null;

  /**
   * `file`: the read models' path (`DATA_DIR/read-models.sqlite`), named in the problem; `store`: the
   * service's connection to it, whose schema version {@link classify} reads (none: nothing is classified).
   */
  constructor(
    private readonly file: string,
    private readonly store?: ReadModelStore,
  ) {}

  /**
   * `error` as the service treats it (`asReadModelsReplaced`): for a statement meeting a missing
   * table or column, a `ReadModelsReplacedError` when the file's version is not this build's (another
   * build rewrote it), else a `ReadModelsAlteredError` (another program changed it); both answer and
   * are reported as their damage. Else `error`.
   */
  classify(error: unknown): unknown {
    return this.store ? asReadModelsReplaced(error, this.store) : error;
  }

  /**
   * Reports `error`, met by `metBy`: when it is the read models found damaged (`isReadModelsDamage`,
   * the one rule) and none was recorded yet, records it and logs it once at error; later ones change
   * nothing. Returns whether `error` is such damage. Any value is accepted (anything else is ignored).
   */
  report(error: unknown, metBy: ReadModelsDamageMetBy): boolean {
    if (!isReadModelsDamage(error)) return false;
    if (this.found) return true;
    this.found = {
      problem:
        error instanceof ReadModelsReplacedError
          ? `the read models file ${this.file} was rewritten by another build of the service while this one ran (it holds read models version ${error.versionOnDisk}, this build's are version ${READ_MODEL_SCHEMA_VERSION}; SQLite: ${error.message.split('; the file holds')[0]}, met by ${metBy}): another service process uses this DATA_DIR (builds from before 2026-11-30 take no lock on it); reads meeting it answer 503 read_models_damaged, and the projector cannot apply the log to it; stop the other process, then restart this service, which rebuilds the read models from the log (nothing is lost)`
          : error instanceof ReadModelsAlteredError
            ? `the read models file ${this.file} lacks a table or column of this build's read models (version ${READ_MODEL_SCHEMA_VERSION}; SQLite: ${error.message.split('; the file holds')[0]}, met by ${metBy}): another program changed it; reads meeting it answer 503 read_models_damaged, and the projector cannot apply the log to it; restart the service, which rebuilds the read models from the log (nothing is lost)`
            : `the read models file ${this.file} is damaged (SQLite: ${(error as Error).message}, met by ${metBy}): reads meeting it answer 503 read_models_damaged, and the projector cannot apply the log to it; restart the service, which moves the file aside and rebuilds it from the log (nothing is lost)`,
      at: new Date().toISOString(),
    };
    this.foundError = error;
    this.logger.error(this.found.problem);
    return true;
  }

  /** The error of the first damage found (a read of `/v1` refused for it answers as it did), or null while none. */
  damageError(): unknown {
    return this.foundError;
  }

  /** The damage found since the start (null while nothing met any). */
  damaged(): ReadModelsDamageFound | null {
    return this.found;
  }
}
