/**
 * The summary-anchor rule (DESIGN §3.3 rule 4: a new summary goes immediately before the first
 * kept real event, and nothing moves): a summary is ordered at the revision of the event it was
 * inserted before (its anchor), ahead of that event (`compareWindowEntries`). One rule for the
 * write-side fold and the read models: it reads only the active window, which both hold (the
 * write side holds no more: DESIGN §4, its state costs O(active window + events since the last
 * compaction)).
 */
import type { SummaryInsertedData } from '../events/session-stream-events';

/** How a fold looks an event up by client id (undefined when no active entry has the id). */
export interface AnchorLookup {
  /** The anchor revision of the active entry with this id. */
  activeAnchor(id: string): bigint | undefined;
}

/**
 * The anchor revision of a `SummaryInserted` event recorded at `revision`: the recorded
 * `insertBeforeRevision` (decimal string) when present; else (logs written before it was recorded)
 * the anchor of the active entry `insertBeforeId`; else (no active entry has that id: the service
 * never writes such a summary, it names a kept event) the summary's own revision, where it was
 * appended. Not the revision of an archived event with that id: the write side's state forgets
 * archived ids at each compaction decision, so the fold and the read models would place the
 * summary differently.
 */
export function summaryAnchorRevision(
  data: Pick<SummaryInsertedData, 'insertBeforeId' | 'insertBeforeRevision'>,
  lookup: AnchorLookup,
  revision: bigint,
): bigint {
  if (typeof data.insertBeforeRevision === 'string') return BigInt(data.insertBeforeRevision);
  if (typeof data.insertBeforeId !== 'string') return revision;
  return lookup.activeAnchor(data.insertBeforeId) ?? revision;
}
