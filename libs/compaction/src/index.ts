/**
 * `@lib/compaction`: the pure, synchronous compaction domain (DESIGN §3). No NestJS, no I/O.
 *
 * Token figures everywhere are in the unit of the estimator used to cost the events: tokens
 * for `cl100k_base` / `o200k_base`, UTF-16 code units for `chars`.
 */
export * from './session-event';
export * from './compaction-types';
export * from './failure-kind';
export * from './formatter';
export * from './text-shows-nothing';
export * from './token-estimators';
export * from './invalid-parameter-error';
export * from './parameter-keys';
export * from './parameters';
export * from './triggers';
export * from './classify';
export * from './turns';
export { settleCut, type SettledCut } from './cut';
export * from './tool-call-pairing';
export * from './strategies/strategy-cut';
export * from './strategies/sliding-window';
export * from './strategies/turn-window';
export * from './strategies/token-count';
export * from './strategies/recursive-summarization';
export * from './strategies/rolling-summary';
export * from './planner';
export * from './summary-id';
export * from './summarizer-prompt';
export * from './summary-chunks';
export * from './summary-budget';
export * from './summarizer-bound';
export * from './extractive-summarizer';
export { cutMiddle, truncateMiddle } from './text';
export { graphemeBoundary } from './grapheme-boundary';
export * from './quoted-input';
export * from './unknown-field-hint';
export * from './text-length';
export * from './limit-refusal';
export * from './script-runs';
