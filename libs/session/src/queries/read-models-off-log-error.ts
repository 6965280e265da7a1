/**
 * A read refused because this process's read models were projected from another log than the
 * event store's (`SessionProjector.readModelsOffLog`): a store restored from an older backup, or
 * replaced, under the running process. Its read models would answer sessions the store no longer
 * holds, and miss what was written since, so no read is served from them until they are rebuilt.
 */
import { SessionError } from '../errors';

/** 503 `read_models_off_log`: the message says what happened and what to do; it names no server path (`/health` does). */
export class ReadModelsOffLogError extends SessionError {
  readonly code = 'read_models_off_log';

  constructor() {
    super(
      "this replica's read models come from another log than the event store's (the store was restored from a backup, or replaced, while this replica ran): nothing is read from them; read from another replica, and restart this one after rebuilding its read models (stop it, then npm run rebuild-read-models, or delete DATA_DIR/read-models.sqlite*; GET /health names the file)",
    );
  }
}
