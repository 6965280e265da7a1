/**
 * The KurrentDB adapter's entry point, `@lib/event-store/kurrentdb`: kept out of `@lib/event-store`
 * so that a service on another store never loads `@kurrent/kurrentdb-client` (gRPC, protobuf and a
 * native bridge, about 13 MiB resident; {@link createEventStore} requires this adapter only when
 * `KURRENTDB_CONNECTION_STRING` is set).
 */
export { KurrentDbEventStore } from './kurrentdb-event-store';
