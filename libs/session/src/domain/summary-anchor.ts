/**
 * The summary-anchor rule (DESIGN §3.3 rule 4: a new summary goes immediately before the first
 * kept real event, and nothing moves): a summary is ordered at the revision of the event it was
 * inserted before (its anchor), ahead of that event (`compareWindowEntries`). One rule for the
 * write-side fold and the read models.
 */
import type { SummaryInsertedData } from '../events/session-stream-events';

/** How a fold looks an event up by client id (each returns undefined when it does not know the id). */
export interface AnchorLookup {
  /** The anchor revision of the active entry with this id. */
  activeAnchor(id: string): bigint | undefined;
  /** The revision of the last event with this id, archived or not. */
  lastRevision(id: string): bigint | undefined;
}

/**
 * The anchor revision of a `SummaryInserted` event recorded at `revision`: the recorded
 * `insertBeforeRevision` (decimal string) when present; else (logs written before it was recorded)
 * the anchor of the active entry `insertBeforeId`, else that id's last revision; else the summary's
 * own revision (it stays where it was appended).
 */
export function summaryAnchorRevision(
  data: Pick<SummaryInsertedData, 'insertBeforeId' | 'insertBeforeRevision'>,
  lookup: AnchorLookup,
  revision: bigint,
): bigint {
  if (typeof data.insertBeforeRevision === 'string') return BigInt(data.insertBeforeRevision);
  if (typeof data.insertBeforeId !== 'string') return revision;
  return lookup.activeAnchor(data.insertBeforeId) ?? lookup.lastRevision(data.insertBeforeId) ?? revision;
}
