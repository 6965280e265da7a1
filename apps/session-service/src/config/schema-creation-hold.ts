/**
 * The start's (and the read-model rebuild's) hold on creating the PostgreSQL schema in a database
 * that holds none of the service's tables (`PostgresEventStore.holdSchemaCreation`): while the
 * read models are checked against the log, such a database reads as an empty log and nothing is
 * created in it, so a start refused because the log is empty leaves the database as it found it
 * and the `pg_restore` its message asks for does not collide (newcomer ncpg73 F3). Other stores
 * have no hold: these do nothing for them.
 */
import type { EventStore } from '@lib/event-store';

/** The PostgreSQL store's methods (absent on the other stores). */
interface SchemaCreationHold {
  holdSchemaCreation?: () => void;
  releaseSchemaCreation?: () => void;
}

/** Holds the schema's creation in a new database until {@link releaseSchemaCreation}. */
export function holdSchemaCreation(store: EventStore): void {
  (store as SchemaCreationHold).holdSchemaCreation?.();
}

/** Ends {@link holdSchemaCreation}: the next operation sets the schema up. */
export function releaseSchemaCreation(store: EventStore): void {
  (store as SchemaCreationHold).releaseSchemaCreation?.();
}
