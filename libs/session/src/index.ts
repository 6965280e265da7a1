/**
 * The session library: commands and handlers (write side), the session decider's fold, summarizers,
 * projections and queries (read side), and their NestJS module.
 */
export * from './tokens';
export * from './errors';
export * from './events/session-stream-events';
export type { RequestedBy } from './events/requested-by';
export * from './domain/session-window';
export * from './decider/session-decider';
export * from './decider/compaction-decider';
export * from './decider/compaction-rebase';
export * from './decider/compaction-answer';
export { usageOf, recordedSummarizer, type CompleteSummarizerUsage, type CompleteSummarizerIdentity } from './decider/summarizer-spend';
export * from './domain/clone-session-window';
export * from './domain/event-costs';
export * from './domain/session-ids';
export * from './domain/client-id-rule';
export * from './domain/client-time-rule';
export * from './domain/utc-time-text';
export * from './domain/openai-chat-format';
export * from './domain/policy-answer';
export * from './summarizers/summarizer';
export * from './summarizers/openai-summarizer';
export * from './summarizers/extractive-summarizer';
export * from './summarizers/summarizer-config';
export * from './configuration-refusal';
export * from './write-side/session-loader';
export * from './write-side/session-snapshot';
export * from './write-side/session-state-cache';
export * from './write-side/compaction-params';
export * from './write-side/decision-watch';
export * from './write-side/append-session-events';
export * from './write-side/appended-events-observer';
export * from './write-side/compact-session';
export * from './write-side/set-compaction-policy';
export * from './write-side/erase-session';
export * from './write-side/writes-while-read-models-full';
export { erasedRowsOf, erasesCopyOf, ALL_ROWS, type ErasedRows, type SessionErasedData } from './events/erasure-events';
export * from './write-side/auto-compaction';
export * from './write-side/auto-compaction-backoff';
export * from './read-side';
export * from './queries/json-safe';
export * from './queries/session-reads';
export * from './queries/session-history-reads';
export * from './queries/compaction-diff';
export * from './domain/event-preview';
export * from './session.module';
export { DEFAULT_COUNTING_DEADLINE_MS } from './token-counting/token-counting-pool';
