/** Injection token of the {@link EventStore} port (the SQLite or KurrentDB adapter). */
export const EVENT_STORE = Symbol('EVENT_STORE');
/** Injection token of the {@link Summarizer} used by compactions. */
export const SUMMARIZER = Symbol('SUMMARIZER');
/** Injection token of the session service settings ({@link SessionSettings}). */
export const SESSION_SETTINGS = Symbol('SESSION_SETTINGS');
