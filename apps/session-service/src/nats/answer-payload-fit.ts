/**
 * What a command's answer is published as on the results subject and `Reply-To`: its whole JSON
 * when it fits in the server's `max_payload`, else a reduced one ({@link fitMembers}). An answer the
 * server refuses is not stored, so its command is redelivered and answered again, the same size, for
 * ever: a compaction of a huge window holds its kept and archived ids and its summary.
 */
import { fitMembers, type MemberFit } from './json-members-fit';

/**
 * The members of an answer left out first (`kept`, `archived`, `summary`: they grow with the
 * session's window, read them from the compaction's history item and diff), and those never left
 * out (what tells what the command did: the compaction's id and outcome, the revision and position
 * it stands on, an error's code, message and parameter).
 */
export const ANSWER_FIT: MemberFit = {
  listsFirst: ['kept', 'archived', 'summary'],
  neverOmitted: ['compactionId', 'outcome', 'recorded', 'replayed', 'dryRun', 'revision', 'position', 'code', 'message', 'parameter'],
};

const encoder = new TextEncoder();

/**
 * The UTF-8 JSON of answer `body` in at most `limit` bytes (what `max_payload` counts; the caller
 * leaves room for headers): whole when it fits, else without the members {@link ANSWER_FIT} lets
 * go, named in `omitted` (the last member). A body that is not an object is encoded as is. Pure.
 */
export function answerPayload(body: unknown, limit: number): Uint8Array {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return encoder.encode(JSON.stringify(body));
  return fitMembers(body as Record<string, unknown>, limit, ANSWER_FIT, (kept, omitted) =>
    encoder.encode(JSON.stringify(omitted.length === 0 ? body : { ...kept, omitted })),
  );
}
