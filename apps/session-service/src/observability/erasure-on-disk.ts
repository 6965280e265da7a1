/**
 * Where an erasure's text may still be on disk in DATA_DIR, for `/health` (`erasure`) and the log:
 * - a WAL scrub still pending: after an erasure, the WAL of the events file or of the read models
 *   is truncated; another connection's open read (e.g. a `sqlite3 .backup` of the running service)
 *   refuses that, and it is retried until it succeeds (`SqliteWalPurge`); meanwhile the erased
 *   rows' older pages are in that `-wal` file. One line is logged when such a scrub completes.
 * - read models moved aside as damaged (`read-models.sqlite.damaged-<time>`, damaged-read-models.ts):
 *   they hold the conversation text of every session they held, and no later erasure reaches
 *   them. One warn line at start names them, and one per erasure made while one exists (not per
 *   erasure record a rebuild or the start-up catch-up replays).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Logger } from '@nestjs/common';
import type { PendingWalScrub, WalScrubbed } from '@lib/event-store';
import { READ_MODEL_FILE_NAME } from '@lib/session';

/** A store whose file has a WAL scrubbed after erasures (the SQLite event store, the read models). */
export interface WalScrubbingStore {
  pendingWalScrub(): PendingWalScrub | null;
  reportWalScrubs(listener: (scrubbed: WalScrubbed) => void): void;
}

/** `/health`'s `erasure` part (see the module doc). */
export interface ErasureOnDiskState {
  /** WAL files still holding erased pages (file name in DATA_DIR or full path elsewhere, since when). */
  pendingWalScrub: Array<{ file: string; since: string }>;
  /** Read-model files moved aside as damaged in DATA_DIR (names), which erasures do not reach. */
  damagedReadModelsAside: string[];
}

/** The names of the damaged read-model files moved aside in `dataDir` (not their -wal and -shm files), sorted; [] when none or unreadable. */
export function damagedReadModelsAside(dataDir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(dataDir);
  } catch {
    return [];
  }
  return names.filter((name) => name.startsWith(`${READ_MODEL_FILE_NAME}.damaged-`) && !/-(wal|shm)$/.test(name)).sort();
}

/** The warning about damaged read models moved aside (`names`), said at start and at each erasure while one exists. */
export function damagedAsideWarning(names: readonly string[], when: string): string {
  return `${when}: DATA_DIR holds read models moved aside as damaged (${names.join(', ')}): they hold the conversation text of the sessions they held, which no erasure reaches; delete them (with their -wal and -shm files) once inspected`;
}

/** Tracks the copies of erased text on disk in DATA_DIR (see the module doc). */
export class ErasureOnDisk {
  private readonly logger = new Logger('Erasure');
  private readonly stores: WalScrubbingStore[];

  /** `stores`: the SQLite event store (when the store is SQLite) and the read models. Logs the start-up warning when moved-aside files exist. */
  constructor(
    private readonly dataDir: string,
    stores: ReadonlyArray<Partial<WalScrubbingStore>>,
  ) {
    this.stores = stores.filter((s): s is WalScrubbingStore => typeof s.pendingWalScrub === 'function' && typeof s.reportWalScrubs === 'function');
    for (const store of this.stores)
      store.reportWalScrubs(({ file, attempts, pendingMs }) =>
        this.logger.log(
          `the WAL scrub after an erasure completed: ${this.name(file)} holds no erased page any more (another connection's read had refused it for ${pendingMs} ms, ${attempts} tries)`,
        ),
      );
    const aside = damagedReadModelsAside(dataDir);
    if (aside.length > 0) this.logger.warn(damagedAsideWarning(aside, 'at start'));
  }

  /** Called for each erasure applied once the read models reached the log's head since the start (this replica's or another's; not the records a rebuild replays): one warn line while moved-aside read models exist. */
  erased(): void {
    const aside = damagedReadModelsAside(this.dataDir);
    if (aside.length > 0) this.logger.warn(damagedAsideWarning(aside, 'a session was erased'));
  }

  /** `/health`'s `erasure` part. */
  state(): ErasureOnDiskState {
    const pendingWalScrub = this.stores.flatMap((store) => {
      const pending = store.pendingWalScrub();
      return pending ? [{ file: this.name(pending.file), since: pending.since }] : [];
    });
    return { pendingWalScrub, damagedReadModelsAside: damagedReadModelsAside(this.dataDir) };
  }

  /** `file`'s name when it is in DATA_DIR, else its path. */
  private name(file: string): string {
    return path.dirname(path.resolve(file)) === path.resolve(this.dataDir) ? path.basename(file) : file;
  }
}
