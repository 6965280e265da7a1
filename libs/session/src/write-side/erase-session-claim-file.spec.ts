/**
 * Erasing a session on a SQLite store file removes its claim's lock file (named by a hash of the
 * session: a guessed session id could be checked against the names left behind), as nothing else of
 * the erased session is left on disk; other sessions' lock files stay.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventBus } from '@nestjs/cqrs';
import { SqliteEventStore, sqliteClaimFileName, sqliteClaimsDirectory } from '@lib/event-store';
import { ReadModelStore } from '../read-side/read-model-store';
import { SessionProjector } from '../read-side/session-projector';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { EraseSessionCommand, EraseSessionHandler } from './erase-session';
import { sessionClaimName } from './session-claims';
import { SessionStateCache } from './session-state-cache';

it("given two sessions whose passes took claims, when one is erased, then its lock file is gone and the other's stays", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'erase-claim-file-'));
  const file = join(dir, 'events.sqlite');
  const store = SqliteEventStore.open(file);
  const projector = new SessionProjector(ReadModelStore.open(':memory:'));
  projector.start(store);
  try {
    const append = new AppendSessionEventsHandler(store, new SessionStateCache(store), { publish: () => undefined } as unknown as EventBus);
    for (const sessionId of ['gone', 'stays']) {
      await append.execute(new AppendSessionEventsCommand('t', sessionId, [{ event: { id: `${sessionId}-u1`, type: 'user', text: 'hello' } }]));
      await (await store.tryClaim!(sessionClaimName('t', sessionId)))!.release();
    }
    expect(await projector.waitForPosition(await store.headPosition(), 5000)).toBe(true);
    const erase = new EraseSessionHandler(store, new SessionStateCache(store), projector);
    await erase.execute(new EraseSessionCommand('t', 'gone'));
    // was: both files (the erased session's name left on disk as a hash)
    expect(readdirSync(sqliteClaimsDirectory(file))).toEqual([sqliteClaimFileName(sessionClaimName('t', 'stays'))]);
  } finally {
    await projector.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
