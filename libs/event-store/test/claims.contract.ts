/// <reference types="jest" />
/**
 * What every store with claims (`EventStore.tryClaim`) must give, whatever holds them: at most one
 * holder of a name among the stores of this process and every other process on the store, held
 * until `release()` or until the holding process is gone (a real OS process, SIGKILLed; see
 * fixtures/store-child.ts `claim`).
 */
import type { EventStore } from '../src';
import { killRunningChildren, spawnChild, type Child } from './fixtures/spawn-child';

/** How a spec provides the store of the claims contract. */
export interface ClaimsTarget {
  /** The address of the store (a SQLite file or a `postgres://` URL), for the children: read it inside tests (set by the spec's hooks). */
  target(): string;
  /** Opens a new store on {@link target} in this process (closed by the contract). */
  open(): EventStore;
}

/** Registers the claims tests for one adapter. */
export function claimsContract(name: string, t: ClaimsTarget): void {
  describe(`${name} claims (tryClaim): at most one holder of a name, across stores and processes, never a process that is gone`, () => {
    let a: EventStore;
    let b: EventStore;
    beforeEach(() => {
      // two stores on one target: two replicas' (or two of one process)
      a = t.open();
      b = t.open();
    });
    afterEach(async () => {
      killRunningChildren();
      await a.close();
      await b.close();
    });

    /** A child process that asked for `claimName` (its answer printed). */
    async function childClaiming(claimName: string): Promise<Child> {
      const child = spawnChild(['claim', t.target(), claimName]);
      await child.waitFor((f) => f.some((x) => x.t === 'claim'));
      return child;
    }

    it('refuses a name another store holds until it is released, and keeps names apart', async () => {
      const held = await a.tryClaim!('auto-compaction s1');
      expect(held).not.toBeNull();
      expect(await b.tryClaim!('auto-compaction s1')).toBeNull();
      const other = await b.tryClaim!('auto-compaction s2');
      expect(other).not.toBeNull();
      await held!.release();
      await held!.release(); // twice: nothing more given up
      const now = await b.tryClaim!('auto-compaction s1');
      expect(now).not.toBeNull();
      expect(await a.tryClaim!('auto-compaction s1')).toBeNull();
      await now!.release();
      await other!.release();
    });

    it('holds a name once in a process too: the same store refuses it (also two claims asked together) until it is released', async () => {
      const [first, second] = await Promise.all([a.tryClaim!('auto-compaction s6'), a.tryClaim!('auto-compaction s6')]);
      expect([first, second].filter((c) => c !== null)).toHaveLength(1);
      const held = (first ?? second)!;
      expect(await a.tryClaim!('auto-compaction s6')).toBeNull();
      expect(await b.tryClaim!('auto-compaction s6')).toBeNull();
      await held.release();
      const again = await a.tryClaim!('auto-compaction s6');
      expect(again).not.toBeNull();
      await again!.release();
      // released once, unlocked once: another store gets it
      const other = await b.tryClaim!('auto-compaction s6');
      expect(other).not.toBeNull();
      await other!.release();
    });

    it('another process holding a name: refused here at once; released by it, claimed here', async () => {
      const child = await childClaiming('auto-compaction p1');
      expect(child.facts.find((f) => f.t === 'claim')).toEqual({ t: 'claim', got: true });
      const started = Date.now();
      expect(await a.tryClaim!('auto-compaction p1')).toBeNull();
      expect(Date.now() - started).toBeLessThan(1000); // no wait for the holder
      const other = await a.tryClaim!('auto-compaction p2');
      expect(other).not.toBeNull();
      child.proc.stdin!.end('release\n');
      await child.waitFor((f) => f.some((x) => x.t === 'released'));
      expect((await child.exited).code).toBe(0);
      const now = await a.tryClaim!('auto-compaction p1');
      expect(now).not.toBeNull();
      await now!.release();
      await other!.release();
    });

    it('a name this process holds is refused to another process', async () => {
      const held = await a.tryClaim!('auto-compaction p3');
      expect(held).not.toBeNull();
      const child = await childClaiming('auto-compaction p3');
      expect(child.facts.find((f) => f.t === 'claim')).toEqual({ t: 'claim', got: false });
      await held!.release();
    });

    it('a process SIGKILLed while it holds a name leaves it free', async () => {
      const child = await childClaiming('auto-compaction p4');
      expect(child.facts.find((f) => f.t === 'claim')).toEqual({ t: 'claim', got: true });
      expect(await a.tryClaim!('auto-compaction p4')).toBeNull();
      child.proc.kill('SIGKILL');
      expect((await child.exited).signal).toBe('SIGKILL');
      // PostgreSQL notices the ended connection a moment later; SQLite's lock is gone with the process
      let got = await a.tryClaim!('auto-compaction p4');
      for (let i = 0; i < 50 && !got; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        got = await a.tryClaim!('auto-compaction p4');
      }
      expect(got).not.toBeNull();
      await got!.release();
    });
  });
}
