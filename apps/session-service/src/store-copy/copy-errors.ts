/**
 * Why `npm run copy-store` refuses or fails. Refusals ({@link CopyRefusedError}) come before
 * anything is written (exit code 2); failures after writing began ({@link CopyFailedError}) leave the
 * target emptied (or, when even that failed, say so: exit code 1).
 */
import { copyMayStillRun, describeCopyMarker, type CopyMarker } from '@lib/event-store';

/** Refused before anything was written: a store that cannot be copied (KurrentDB), a target that is not empty. */
export class CopyRefusedError extends Error {
  override readonly name = 'CopyRefusedError';
}

/**
 * Refused because something else uses the target ({@link CopyRefusedError}, exit code 2): a service's connection to the
 * PostgreSQL database, another connection holding the SQLite file open. The copy's mark was taken back; a SQLite
 * target file is left where it is (another process has it open: removing it would take its writes away with it).
 */
export class TargetInUseError extends CopyRefusedError {}

/**
 * The copy failed after it began writing the target: the source moved meanwhile, or the target
 * does not match the source. `targetEmptied`: whether the target was emptied again (else it holds a
 * partial copy). `removedFile`: the SQLite target file the command made, removed again (with its
 * `-wal` and `-shm` files) so the same command can be run again; the message then says so.
 */
export class CopyFailedError extends Error {
  override readonly name = 'CopyFailedError';
  constructor(
    readonly problem: string,
    readonly targetEmptied: boolean,
    readonly removedFile?: string,
    readonly othersWrote?: string,
  ) {
    super(
      `${problem}; ${
        othersWrote !== undefined
          ? `something else wrote into the target during the copy (${othersWrote}): a service (or another program) is using it, so nothing was removed: its writes are kept, beside this copy's partial rows and its mark es_copy_in_progress (no service starts on the target while it is there). The target needs attention: stop every service using it, keep what they wrote if it matters (they may have acknowledged it), then drop and re-create it (or delete its file) and run the copy again; point replicas at the target only once the copy has been verified (docs/stores.md, "Switching stores", step 4)`
          : removedFile !== undefined
            ? `the target file ${removedFile} was removed again (nothing of this copy is left): fix the cause and run the same copy again`
            : targetEmptied
              ? 'the target was emptied again (nothing of this copy is left in it): fix the cause and run the copy again'
              : 'the target could NOT be emptied and holds an incomplete copy: do not use it; drop and re-create it (or delete its file), then run the copy again'
      }`,
    );
  }
}

/**
 * Throws {@link CopyRefusedError} when the copy that marked the target (`marker`) may still be running
 * on this host ({@link copyMayStillRun}: its pid is alive): `--empty-partial-target` must not empty a
 * copy in progress. `target`: how the message names the target, e.g. `--to /data/copy.sqlite`.
 */
export function refuseWhileCopyRuns(marker: CopyMarker, target: string): void {
  if (!copyMayStillRun(marker)) return;
  throw new CopyRefusedError(
    `${target}: --empty-partial-target refused: the copy that marked it (${describeCopyMarker(marker)}) is still running as pid ${marker.pid} on this host (${marker.host}); let it finish, or stop it and run this command again (if pid ${marker.pid} is no longer a copy-store, delete the target by hand)`,
  );
}
