/**
 * Lets a transport learn which state of the session a command was decided on, without reading the
 * store again: the command handlers tell the watcher of a command ({@link watchDecisions}) every
 * state they load to decide it on ({@link tellDecidingOn}), the last one told being the one the
 * command's answer (or refusal) was decided on. The NATS transport records it as the answer's basis
 * (apps/session-service/src/nats/answer-basis.ts), so that an erasure deletes the answers of the
 * life it closes. A command without a watcher (HTTP, auto-compaction) tells no one.
 */
import type { SessionWindowState } from '../domain/session-window';

/**
 * What a command was decided on: the stream revision and global position (bigints) of the last
 * event of the state loaded, taken when it was loaded (the cache moves its shared state on in
 * place afterwards); null when that state had no event, or its position is not known.
 */
export type DecidedOn = { revision: bigint; position: bigint } | null;

/** Told of each state a command's handler decides on, in order (see the module doc). */
export interface DecisionWatcher {
  decidingOn(state: DecidedOn): void;
}

const watchers = new WeakMap<object, DecisionWatcher>();

/** Registers `watcher` for `command` (the command object given to the command bus); returns `command`. */
export function watchDecisions<C extends object>(command: C, watcher: DecisionWatcher): C {
  watchers.set(command, watcher);
  return command;
}

/** Tells `command`'s watcher, if it has one, that it is being decided on `state` (null: a session without events). */
export function tellDecidingOn(command: object, state: SessionWindowState | null): void {
  const watcher = watchers.get(command);
  if (!watcher) return;
  watcher.decidingOn(state && state.revision !== null && state.position !== null ? { revision: state.revision, position: state.position } : null);
}
