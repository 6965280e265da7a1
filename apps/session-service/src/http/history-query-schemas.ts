/**
 * Query parameters of the audit routes (session list and summary, policy, compaction history and
 * diff, erasures), as zod schemas: validation and the OpenAPI document come from these definitions.
 */
import { z } from 'zod';
import { MAX_CURSOR_LENGTH } from '@lib/session';
import { clientId, dateTimeParam, integerInRange, orderedTimeRange, revisionText } from './request-schemas';
import { identityFilter } from './validate';

const position = revisionText().describe(
  "global log position (from an append, compaction or policy answer) to wait for, e.g. a write made through another replica; without it a read waits for this service's own acknowledged writes; 0 waits for nothing",
);
const estimator = z
  .enum(['cl100k_base', 'o200k_base', 'chars'], { error: 'must be cl100k_base, o200k_base or chars' })
  .describe(
    "estimator of windowTokens: cl100k_base when absent, whatever the session policy's estimator (so a list counts every session in one unit); pass the policy's estimator to compare windowTokens with its token-count trigger",
  );
const limit = integerInRange(1n, 100n).describe('page size, 1..100 (default 50)');
const cursor = z
  .string()
  // as long as any route's cursor, so that the decoder names the route of another paging's cursor
  .max(MAX_CURSOR_LENGTH, { message: 'is not a cursor; pass the nextCursor of the previous page unchanged' })
  .describe(
    'nextCursor of the previous page, unchanged (absent or empty: the first page); any replica follows it (one whose read models are behind that page waits for them); a cursor no page made, e.g. one past the end of the log or of the session, is refused with 400 invalid_query',
  );

/** `GET /v1/sessions`. */
export const sessionListQuery = z
  .strictObject({
    // the rule of the user ids appends name (recall's filter too): a filter no user id can match is refused, not answered empty
    userId: identityFilter(clientId.optional().describe('only sessions of this user'), {
      give: 'a user id',
      without: 'list the sessions of every user of the tenant',
    }),
    updatedSince: dateTimeParam().optional().describe("only sessions active at or after this time (ISO-8601; an offset's + sent as %2B)"),
    updatedBefore: dateTimeParam()
      .optional()
      .describe(
        "only sessions whose last activity is before this time, exclusive (ISO-8601; an offset's + sent as %2B): e.g. a clean-up job's sessions inactive for 90 days; combinable with updatedSince, which must then be earlier (else 400)",
      ),
    estimator: estimator.optional(),
    limit: limit.optional(),
    cursor: cursor.optional(),
    minPosition: position.optional(),
  })
  .refine(...orderedTimeRange('updatedSince', 'updatedBefore'));

/** `GET /v1/sessions/:sessionId`. */
export const sessionQuery = z.strictObject({ estimator: estimator.optional(), minPosition: position.optional() });

/** `GET …/policy`, `GET …/compactions/:compactionId` and `…/diff`. */
export const minPositionQuery = z.strictObject({ minPosition: position.optional() });

/** `GET …/compactions`. */
export const compactionListQuery = z.strictObject({ limit: limit.optional(), cursor: cursor.optional(), minPosition: position.optional() });

/** `GET /v1/erasures`. */
export const erasureListQuery = z.strictObject({ limit: limit.optional(), cursor: cursor.optional(), minPosition: position.optional() });
