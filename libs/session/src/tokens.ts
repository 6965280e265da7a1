/** Injection token of the {@link EventStore} port (the SQLite or KurrentDB adapter). */
export const EVENT_STORE = Symbol('EVENT_STORE');
/**
 * Injection token of the {@link EventStore} the command handlers (append, compaction, policy,
 * erasure) and their session-state cache read and write through: {@link EVENT_STORE} as
 * `SessionModuleOptions.commandStore` made it (by default the same store). A transport that reads
 * the log as part of a command (e.g. a redelivery's check) reads through it too.
 */
export const COMMAND_EVENT_STORE = Symbol('COMMAND_EVENT_STORE');
/** Injection token of the {@link Summarizer} used by compactions. */
export const SUMMARIZER = Symbol('SUMMARIZER');
/** Injection token of the session service settings ({@link SessionSettings}). */
export const SESSION_SETTINGS = Symbol('SESSION_SETTINGS');
