/**
 * What a copy target holds, read directly (not through the service's stores): the number of events and whether it
 * carries the copy's mark (`es_copy_in_progress`), for the copy-store specs.
 */
import * as fs from 'node:fs';
import Database from 'better-sqlite3';
import { Client } from 'pg';

/** Events in a SQLite file (0 for a file that does not exist) and whether it holds the copy's mark. */
export function sqliteState(file: string): { events: number; marked: boolean } {
  if (!fs.existsSync(file)) return { events: 0, marked: false };
  const db = new Database(file, { readonly: true });
  try {
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((t) => t.name);
    const events = tables.includes('events') ? Number((db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n) : 0;
    return { events, marked: tables.includes('es_copy_in_progress') };
  } finally {
    db.close();
  }
}

/** Events in a PostgreSQL database and whether it holds the copy's mark, read by the pg driver itself. */
export async function postgresState(url: string): Promise<{ events: number; marked: boolean }> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const [row] = (
      await client.query<{ events: boolean; marked: boolean }>(
        "SELECT to_regclass('es_events') IS NOT NULL AS events, to_regclass('es_copy_in_progress') IS NOT NULL AS marked",
      )
    ).rows;
    const events = row.events ? Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM es_events')).rows[0].n) : 0;
    return { events, marked: row.marked };
  } finally {
    await client.end();
  }
}
