/// <reference types="jest" />
/**
 * Multi-process guarantees every shared store must give (issue 3, acceptance 3 and 4; issue 12):
 * real OS processes on one store. Children are spawned through ts-node (see fixtures/).
 */
import type { EventStore } from '../src';
import { killRunningChildren, spawnChild } from './fixtures/spawn-child';

/** How a spec provides a fresh store to the multi-process suite. */
export interface MultiProcessTarget {
  /** A new, empty store's address for the children (a SQLite file or a `postgres://` URL). */
  newTarget(tag: string): Promise<string>;
  /** Opens the store at `target` in this process (to check what the children wrote). */
  open(target: string): EventStore;
}

/** Registers the race and SIGKILL tests for one adapter. */
export function multiProcessContract(name: string, t: MultiProcessTarget): void {
  describe(`${name} with several OS processes`, () => {
    afterEach(killRunningChildren);

    it('two processes appending at exact revisions: every ack present once, every loser got the typed error, no gaps', async () => {
      const file = await t.newTarget('race');
      const stream = 'session-race';
      const perChild = 120;
      const children = ['a', 'b'].map((tag) => spawnChild(['race', file, stream, String(perChild), tag]));
      await Promise.all(children.map((c) => c.waitFor((f) => f.some((x) => x.t === 'ready'))));
      children.forEach((c) => c.proc.stdin!.end('go\n'));
      const exits = await Promise.all(children.map((c) => c.exited));
      children.forEach((c, i) =>
        expect({ child: i, exit: exits[i].code, errors: c.facts.filter((f) => f.t === 'error'), stderr: c.stderr() }).toEqual({
          child: i,
          exit: 0,
          errors: [],
          stderr: '',
        }),
      );

      const facts = children.flatMap((c) => c.facts);
      const acks = facts.filter((f) => f.t === 'ack');
      const conflicts = facts.filter((f) => f.t === 'conflict');
      expect(acks).toHaveLength(2 * perChild);
      expect(conflicts.length).toBeGreaterThan(0); // the processes really raced
      // a loser's error carries the revision it expected and a different actual revision
      for (const c of conflicts) expect(c.actual).not.toEqual(c.expected);

      const store = t.open(file);
      try {
        const events = await store.readStream(stream);
        expect(events.map((e) => e.revision)).toEqual(events.map((_, i) => BigInt(i))); // no gaps
        expect(events).toHaveLength(acks.length); // nothing unacknowledged, nothing twice
        const byId = new Map(events.map((e) => [e.id, e]));
        expect(byId.size).toBe(events.length);
        for (const ack of acks) expect(byId.get(ack.id as string)?.revision.toString()).toBe(ack.rev);
        // no conflicting attempt was written
        for (const c of conflicts) expect(byId.has(c.id as string)).toBe(false);
      } finally {
        await store.close();
      }
      process.stderr.write(`race: ${acks.length} acks, ${conflicts.length} conflicts (typed errors) across 2 processes\n`);
    });

    it('a child killed with SIGKILL mid-append loop loses no acknowledged append and leaves none partial', async () => {
      const file = await t.newTarget('crash');
      const child = spawnChild(['crash', file, '4']);
      await child.waitFor((f) => f.filter((x) => x.t === 'ack').length >= 150);
      child.proc.kill('SIGKILL');
      const exit = await child.exited;
      expect(exit.signal).toBe('SIGKILL');
      expect(child.facts.filter((f) => f.t === 'error')).toEqual([]);
      const acks = child.facts.filter((f) => f.t === 'ack') as unknown as { stream: string; batch: number; ids: string[]; rev: string }[];

      const store = t.open(file);
      try {
        const all = await store.readAll({ maxCount: 100_000 });
        const byId = new Map(all.map((e) => [e.id, e]));
        for (const ack of acks) {
          const found = ack.ids.map((id) => byId.get(id));
          expect(found.every((e) => e !== undefined && e.streamId === ack.stream)).toBe(true);
          expect(found[found.length - 1]!.revision.toString()).toBe(ack.rev);
        }
        // every batch present is complete (acknowledged or not), and each stream has no gaps
        const batches = new Map<string, { size: number; seen: number }>();
        for (const e of all) {
          const d = e.data as { w: number; batch: number; size: number };
          const key = `${e.streamId}/${d.batch}`;
          const b = batches.get(key) ?? { size: d.size, seen: 0 };
          b.seen++;
          batches.set(key, b);
        }
        for (const [key, b] of batches) expect({ key, seen: b.seen }).toEqual({ key, seen: b.size });
        for (let w = 0; w < 4; w++) {
          const events = await store.readStream(`session-crash-${w}`);
          expect(events.map((e) => e.revision)).toEqual(events.map((_, i) => BigInt(i)));
        }
        process.stderr.write(`crash: ${acks.length} acked appends, ${batches.size} batches on disk after SIGKILL\n`);
      } finally {
        await store.close();
      }
    });
  });
}
