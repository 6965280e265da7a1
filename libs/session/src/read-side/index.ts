/** The read side (DESIGN §5): read models in SQLite, the projector that maintains them, and their queries. */
export * from './invalid-query-error';
export * from './malformed-event-error';
export * from './read-model-schema';
export * from './read-model-store';
export * from './read-model-dump';
export * from './recall-document';
export * from './recall-match-expression';
export * from './recall-cursor';
export * from './session-read-model-writer';
export * from './session-projector';
export * from './position-waiters';
export * from './queries/session-row';
export * from './queries/window-query';
export * from './queries/recall-query';
export * from './queries/compaction-history-query';
export * from './queries/session-log-query';
