/**
 * SQLite claims (`SqliteEventStore.tryClaim`): SQLite's exclusive lock on a lock file of the name
 * beside the store file (see sqlite-claims.ts). The store-agnostic part is claims.contract.ts (run
 * for PostgreSQL too); here what is SQLite's own.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventStoreUnavailableError, SqliteEventStore } from '../src';
import { sqliteClaimFileName, sqliteClaimsDirectory } from '../src/sqlite/sqlite-claims';
import { claimsContract } from './claims.contract';

jest.setTimeout(30_000);

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'es-claims-'));
  file = join(dir, 'events.sqlite');
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

claimsContract('SQLite', { target: () => file, open: () => SqliteEventStore.open(file) });

describe('SQLite claims: lock files', () => {
  it('are shared by stores opening one file through different paths (a symbolic link to it)', async () => {
    const linked = join(dir, 'linked');
    mkdirSync(linked);
    symlinkSync(file, join(linked, 'events.sqlite'));
    const direct = SqliteEventStore.open(file);
    const viaLink = SqliteEventStore.open(join(linked, 'events.sqlite'));
    try {
      const claim = await direct.tryClaim!('auto-compaction x');
      // was: granted (a claims directory of its own beside the link: no exclusion, two model calls per decision)
      expect(await viaLink.tryClaim!('auto-compaction x')).toBeNull();
      await claim!.release();
      expect(readdirSync(linked)).toEqual(['events.sqlite']);
    } finally {
      await viaLink.close();
      await direct.close();
    }
  });

  it("forgetClaim deletes the name's lock file (an erased session leaves no file named by it); a later claim works", async () => {
    const store = SqliteEventStore.open(file);
    try {
      const claimsDir = sqliteClaimsDirectory(file);
      await (await store.tryClaim!('auto-compaction gone'))!.release();
      const held = await store.tryClaim!('auto-compaction kept');
      expect(readdirSync(claimsDir).sort()).toEqual([sqliteClaimFileName('auto-compaction gone'), sqliteClaimFileName('auto-compaction kept')].sort());
      await store.forgetClaim!('auto-compaction gone');
      await store.forgetClaim!('auto-compaction never claimed');
      expect(readdirSync(claimsDir)).toEqual([sqliteClaimFileName('auto-compaction kept')]);
      // a held claim whose file is deleted: its holder releases it as usual (a new claim of the name would lock a new
      // file: forgetClaim is for an erased session, whose passes in flight are abandoned)
      await store.forgetClaim!('auto-compaction kept');
      await held!.release();
      expect(readdirSync(claimsDir)).toEqual([]);
      const again = await store.tryClaim!('auto-compaction gone');
      expect(again).not.toBeNull();
      await again!.release();
    } finally {
      await store.close();
    }
  });

  it('locks an empty file per name beside the store file (in events-claims, not matching events.sqlite*), with nothing written into it', async () => {
    const store = SqliteEventStore.open(file);
    try {
      const held = await Promise.all(['auto-compaction x', 'auto-compaction y'].map((name) => store.tryClaim!(name)));
      await store.appendToStream('s', [{ id: randomUUID(), type: 't', data: {} }]);
      await Promise.all(held.map((c) => c!.release()));
      const claimsDir = sqliteClaimsDirectory(file);
      expect(claimsDir).toBe(join(dir, 'events-claims'));
      expect(readdirSync(claimsDir).sort()).toEqual([sqliteClaimFileName('auto-compaction x'), sqliteClaimFileName('auto-compaction y')].sort());
      for (const name of readdirSync(claimsDir)) {
        expect(name).toMatch(/^[0-9a-f]{32}\.lock$/);
        expect(statSync(join(claimsDir, name)).size).toBe(0);
      }
    } finally {
      await store.close();
    }
  });

  it('gives up the claims still held when the store is closed, and refuses new ones then', async () => {
    const store = SqliteEventStore.open(file);
    const other = SqliteEventStore.open(file);
    try {
      expect(await store.tryClaim!('auto-compaction c')).not.toBeNull();
      expect(await other.tryClaim!('auto-compaction c')).toBeNull();
      await store.close();
      await expect(store.tryClaim!('auto-compaction c')).rejects.toMatchObject({ name: 'EventStoreClosedError' });
      const now = await other.tryClaim!('auto-compaction c');
      expect(now).not.toBeNull();
      await now!.release();
    } finally {
      await other.close();
    }
  });

  it('answers EventStoreUnavailableError when the lock file cannot be created (nothing claimed)', async () => {
    const store = SqliteEventStore.open(file);
    try {
      writeFileSync(sqliteClaimsDirectory(file), ''); // a file where the claims directory goes (also refused to root)
      await expect(store.tryClaim!('auto-compaction u')).rejects.toBeInstanceOf(EventStoreUnavailableError);
    } finally {
      await store.close();
    }
  });

  it('a private in-memory store has no claims (every pass runs unclaimed, as before)', async () => {
    const store = SqliteEventStore.open(':memory:');
    expect(store.tryClaim).toBeUndefined();
    expect('tryClaim' in store && store.tryClaim !== undefined).toBe(false);
    await store.close();
  });
});
