import { searchRecall, type RecallHit, type RecallSearch } from '../queries/recall-query';
import type { ReadModelStore } from '../read-model-store';

/**
 * Every page of a recall paging (tenant `default` unless `search` names one), followed through
 * `nextCursor` (at most 10,000 pages): the hits in paging order, and each page's `order`.
 */
export function allRecallPages(
  store: ReadModelStore,
  search: Omit<RecallSearch, 'tenantId' | 'cursor'> & { tenantId?: string },
): { hits: RecallHit[]; orders: string[] } {
  const hits: RecallHit[] = [];
  const orders: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 10_000; page++) {
    const answer = searchRecall(store, { tenantId: 'default', ...search, cursor });
    hits.push(...answer.items);
    orders.push(answer.order);
    cursor = answer.nextCursor;
    if (cursor === undefined) break;
  }
  return { hits, orders };
}
