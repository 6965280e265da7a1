/**
 * Multi-process guarantees of the SQLite adapter (issue 3, acceptance 3 and 4): real OS processes
 * on one file (see multi-process.contract.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../src';
import { multiProcessContract } from './multi-process.contract';

jest.setTimeout(30_000);

let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'es-mp-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

multiProcessContract('SQLite', { newTarget: async (tag) => join(dir, `${tag}.sqlite`), open: (file) => SqliteEventStore.open(file) });
