/**
 * The PostgreSQL adapter's entry point, `@lib/event-store/postgres`: kept out of `@lib/event-store`
 * so that a service on another store never loads the `pg` driver ({@link createEventStore} requires
 * this adapter only when `DATABASE_URL` is set).
 */
export { PostgresEventStore } from './postgres-event-store';
