import type Database from 'better-sqlite3';
import { statSync } from 'node:fs';

/** How many of `PRAGMA quick_check`'s problem lines {@link sqliteQuickCheck} returns at most. */
const MAX_PROBLEMS = 3;

/**
 * Runs `PRAGMA quick_check` on `db` (every page of the file and its WAL read once: the b-trees'
 * structure and each record's format, not the indexes' agreement with their tables) and returns
 * its first problem lines (at most 3), none when the file is sound. `progress` is told when it
 * starts (the file's size in `bytes`) and when it ends (`ms`: how long it took).
 * @throws better-sqlite3's error when the file cannot be read at all (e.g. `SQLITE_NOTADB`).
 */
export function sqliteQuickCheck(db: Database.Database, progress?: (p: { bytes: number; ms?: number }) => void): string[] {
  const bytes = statSync(db.name, { throwIfNoEntry: false })?.size ?? 0;
  progress?.({ bytes });
  const started = performance.now();
  const lines = (db.pragma(`quick_check(${MAX_PROBLEMS})`) as Array<{ quick_check: string }>).map((row) => row.quick_check);
  progress?.({ bytes, ms: Math.round(performance.now() - started) });
  if (lines.length === 1 && lines[0] === 'ok') return [];
  // The first row may hold several lines, under a `*** in database main ***` heading.
  return lines
    .flatMap((line) => line.split('\n'))
    .filter((line) => line.trim() !== '' && !line.startsWith('***'))
    .slice(0, MAX_PROBLEMS);
}
