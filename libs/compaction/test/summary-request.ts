import type { SummaryRequest } from '../src';

/**
 * A summary request for the extractive summarizer's specs: `toSummarize` (archived lines), no
 * overlap or covered ids, `currentSummaries` (default none) and, when given, `maxSummaryTokens`
 * (the summary's budget in tokens of the session's estimator).
 */
export function summaryRequest(toSummarize: string[], maxSummaryTokens?: number, currentSummaries: string[] = []): SummaryRequest {
  return {
    systemPrompt: 'S',
    shadowPrompt: 'Summarize the conversation we had so far.',
    currentSummaries,
    toSummarize,
    overlap: [],
    coveredIds: [],
    ...(maxSummaryTokens === undefined ? {} : { maxSummaryTokens }),
  };
}
