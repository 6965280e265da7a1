/**
 * An estimate of the memory a folded session state holds, for the byte budget of
 * {@link SessionStateCache}: a cached state keeps every active event whole (its text, tool call
 * arguments and results), so its size follows what the session's clients sent, not the number of
 * events.
 */
import type { SessionEvent } from '@lib/compaction';
import type { SessionWindowState } from '../domain/session-window';

/**
 * Heap bytes one active entry costs besides its strings (the entry, its event object, costs, two
 * bigints, the `createdAt` text, its map slots): measured ~600 bytes per event of ~40 characters
 * (2026-12-04, Node v20.20.2: the heap used after a full collection grew by 11.5 MiB per 20,000
 * such events folded into 16 cached sessions).
 */
export const ENTRY_OVERHEAD_BYTES = 512;

/** Heap bytes of one `revisionsById` entry (the id string, a bigint, the map slot). */
export const REVISION_ENTRY_BYTES = 96;

/** Heap bytes of a state with nothing in it (the object, its maps, the policy). */
export const EMPTY_STATE_BYTES = 1024;

/**
 * Estimated heap bytes of `value`'s strings: 2 bytes per UTF-16 code unit (V8 keeps text with
 * only Latin-1 characters in 1 byte each, so this errs high for it) plus 16 per string, over plain
 * objects and arrays, to a depth of 32 (tool call arguments are JSON of any shape). O(members),
 * not O(characters): a string's length is read, never its text.
 */
export function estimatedStringBytes(value: unknown, depth = 0): number {
  if (typeof value === 'string') return 16 + 2 * value.length;
  if (value === null || typeof value !== 'object' || depth >= 32) return 0;
  let bytes = 0;
  if (Array.isArray(value)) for (const item of value) bytes += estimatedStringBytes(item, depth + 1);
  else for (const key in value) bytes += estimatedStringBytes((value as Record<string, unknown>)[key], depth + 1);
  return bytes;
}

/** Estimated heap bytes one active entry holding `event` costs in a folded state (bytes). */
export function estimatedEntryBytes(event: SessionEvent): number {
  return ENTRY_OVERHEAD_BYTES + estimatedStringBytes(event);
}

/**
 * Estimated heap bytes `state` holds (bytes): its active entries (each event whole, see
 * {@link estimatedEntryBytes}), its revisions by id and its archived open calls. O(active entries
 * + their members); never throws.
 */
export function estimatedStateBytes(state: SessionWindowState): number {
  let bytes = EMPTY_STATE_BYTES + (state.revisionsById.size + state.archivedOpenCalls.size) * REVISION_ENTRY_BYTES;
  for (const entry of state.active.values()) bytes += estimatedEntryBytes(entry.event);
  return bytes;
}
