/**
 * A pass's claim released after its session was erased leaves no lock file named by the session
 * (SQLite): a command that waited for the claim while the session was erased took it afterwards,
 * creating the file again, and nothing removed it (newcomer ncsqlitereplicas F1). A session still
 * there keeps its file (its passes use it).
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore, sqliteClaimFileName, sqliteClaimsDirectory } from '@lib/event-store';
import { sessionKey, sessionStream } from '../events/session-stream-events';
import { DEFAULT_SESSION_SETTINGS } from './auto-compaction';
import { SessionClaims, sessionClaimName } from './session-claims';

/** The claim `got` is, when it is one held. */
function held<T>(got: T | 'claimed-elsewhere' | null): T {
  if (got === null || got === 'claimed-elsewhere') throw new Error(`no claim held: ${String(got)}`);
  return got;
}

it('given the claims of an erased session and of a session with events, when both are released, then only the erased one’s lock file is gone', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claims-release-'));
  const file = join(dir, 'events.sqlite');
  const store = SqliteEventStore.open(file);
  try {
    await store.appendToStream(sessionStream(sessionKey('t', 'kept')), [{ id: '6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b', type: 'T', data: {} }]);
    const claims = new SessionClaims(DEFAULT_SESSION_SETTINGS, store);
    const erased = await claims.tryClaim('t', 'erased');
    const kept = await claims.tryClaim('t', 'kept');
    expect(readdirSync(sqliteClaimsDirectory(file))).toHaveLength(2);
    await claims.release(held(erased), 't', 'erased');
    await claims.release(held(kept), 't', 'kept');
    // was: both files (released with `claim.release()` only)
    expect(readdirSync(sqliteClaimsDirectory(file))).toEqual([sqliteClaimFileName(sessionClaimName('t', 'kept'))]);
    // released: the names may be claimed again
    await held(await claims.tryClaim('t', 'kept')).release();
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
