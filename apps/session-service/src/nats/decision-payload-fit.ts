/**
 * What the decisions feed publishes for a decision: its whole JSON when it fits in the server's
 * `max_payload`, else a reduced one that always fits (newcomer ncnats72 F1). A decision the server
 * refuses is retried and never skipped, so one that can never fit would hold every later decision of
 * every session and tenant behind it for ever: a `CompactionCompleted` of a huge window repeats its
 * archived ids in `archivedBecause`, so leaving out `keptIds` and `archivedIds` alone did not suffice.
 */
import type { PublishedDecision } from './decision-feed-publisher';
import { fitMembers } from './json-members-fit';

/**
 * The members of a decision that are lists of event ids, growing with the session's window:
 * `keptIds` and `archivedIds` (`CompactionCompleted`, the feed adds its compaction's own),
 * `archivedBecause` (`CompactionCompleted`: its four lists partition the archived ids),
 * `archivedIds` and `plannedArchivedIds` (`CompactionFailed`), `archivedIds` (an archive on
 * arrival). In this order in `omitted`.
 */
export const DECISION_ID_LISTS: readonly string[] = ['keptIds', 'archivedIds', 'archivedBecause', 'plannedArchivedIds'];

/**
 * The members of a decision never left out: what a consumer needs to fetch it over HTTP (`GET
 * /v1/sessions/<sessionId>/compactions/<compactionId>`) or to tell what it is, each bounded (ids
 * are at most 128 characters): `compactionId`, `outcome`, `onArrival`, and an erasure record's
 * `sessionId` and `lastRevision`. The envelope (`type`, `tenantId`, `sessionId`, `position`,
 * `revision`, `recordedAt`) is always kept whole.
 */
export const DECISION_IDENTITY: readonly string[] = ['compactionId', 'outcome', 'onArrival', 'sessionId', 'lastRevision'];

const encoder = new TextEncoder();

/**
 * The message body of `decision` (a feed message, {@link PublishedDecision}) in at most `limit`
 * bytes of UTF-8 (what the server's `max_payload` counts; the caller leaves room for headers):
 * 1. the whole decision as JSON, when it fits;
 * 2. else without every id list it has ({@link DECISION_ID_LISTS}: `keptIds`, `archivedIds`,
 *    `archivedBecause`, `plannedArchivedIds`), all at once, so that a consumer has one rule: a
 *    decision with `omitted` is read over HTTP;
 * 3. and while that does not fit either, without its other members one by one, the largest first
 *    (bytes of `"name":value`; equal sizes by name), never those of {@link DECISION_IDENTITY}.
 * The members left out are named in `decision.omitted` (an array of member names, in the order
 * they were left out), the last member of `decision`; the others keep their order and values, and
 * the envelope is unchanged. So the result always fits when the envelope and the identity members
 * with `omitted` naming every other member do (a few hundred bytes: ids are at most 128
 * characters); when even they do not (a `limit` below that), that smallest form is returned. Pure.
 */
export function fitDecisionPayload(decision: PublishedDecision, limit: number): Uint8Array {
  return fitMembers(decision.decision, limit, { listsFirst: DECISION_ID_LISTS, neverOmitted: DECISION_IDENTITY }, (kept, omitted) =>
    encoder.encode(JSON.stringify(omitted.length === 0 ? decision : { ...decision, decision: { ...kept, omitted } })),
  );
}
