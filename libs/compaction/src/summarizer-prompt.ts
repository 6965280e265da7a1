/**
 * What a summarizer model is sent (DESIGN §3.4 recursive-summarization, §3.7 summarizer).
 */
import type { SummaryRequest } from './compaction-types';

/**
 * The default shadow prompt stored with a new summary: the user side of the summary when it is
 * rendered to a model (DESIGN §3.1, summary = user shadow prompt + assistant summary text).
 */
export const DEFAULT_SHADOW_PROMPT = 'Summarize the conversation we had so far.';

/**
 * The default system prompt for the summarizer: the structured recap of DESIGN §3.7. It asks
 * to merge, not drop, the facts of the previous summary, and to treat the overlap section as
 * context only.
 */
export const DEFAULT_SUMMARIZER_SYSTEM_PROMPT = [
  'You compact the memory of an AI agent. You are given the earlier part of a conversation between a user,',
  'an assistant and its tools, which is about to leave the context window, and possibly a summary of what came',
  'before it. Write the summary that will replace them. The assistant will continue the conversation with',
  'only your summary and the most recent messages, so anything you leave out is lost to it.',
  '',
  'Write a structured recap with these sections:',
  "1. User's goal: what the user wants, in the user's own words where possible.",
  '2. Key concepts: the domain terms, constraints and preferences that matter.',
  '3. Concrete artefacts: file paths, identifiers, names, numbers, dates, amounts, URLs, commands and',
  '   values, copied exactly.',
  '4. Errors and fixes: what went wrong and how it was resolved (or that it is unresolved).',
  '5. Decisions: what was decided and why.',
  '6. User messages: every user message, in order, quoted or closely paraphrased.',
  '7. Open tasks: what remains to be done.',
  '8. Work in progress: what was being done at the point where this part of the conversation ends.',
  '9. Next step: the next step the assistant should take.',
  '',
  'If a previous summary is given, merge its facts into your recap: keep every fact that is still true,',
  'update the ones that changed, and do not drop any. Messages marked as context are the beginning of the',
  'part that stays in the window: use them only to understand where the cut is and do not summarize them.',
  'Be factual and specific; do not invent anything. Reply with the recap only.',
].join('\n');

/** Marker headings used in the user message of {@link buildSummarizerMessages}. */
export const SUMMARIZER_SECTION = {
  previousSummary: '## Previous summary (merge its facts; do not drop them)',
  toSummarize: '## Conversation to summarize (oldest first)',
  context: '## Context only: the messages that follow, which stay in the window (do NOT summarize these)',
} as const;

/** How long the model's recap may be: `max` tokens or characters (the unit of the session's estimator). */
export interface SummaryLengthLimit {
  max: number;
  unit: 'tokens' | 'characters';
}

/**
 * The section that tells the model the summary budget (the last part of the user message when a
 * limit is given): at most `limit`, and no longer than the text it replaces (two upper bounds, the
 * smaller holds: a small pass's budget floor may exceed what it summarizes, so the prompt never asks
 * for a recap both "about N" long and "shorter" than a text under N). `replaces`: `conversation`
 * (default; the longer wording, which callers reserving room for this section count) or `summary`,
 * for a call holding only parts of a previous summary (no conversation above it; newcomer ncrecheck63 F6).
 */
export function summaryLengthSection(limit: SummaryLengthLimit, replaces: 'conversation' | 'summary' = 'conversation'): string {
  return (
    `## Length: write at most about ${limit.max} ${limit.unit}, and no more than the ${replaces} above, which the recap replaces in the context window: ` +
    'keep the concrete artefacts, the user messages, the open tasks and the next step; shorten the rest.'
  );
}

/**
 * The messages sent to a summarizer model for `request`:
 *
 * - `system`: `request.systemPrompt` (the strategy's, or {@link DEFAULT_SUMMARIZER_SYSTEM_PROMPT});
 * - `user`: the current summary text(s) to merge (when any), then the formatted events to
 *   summarize (one per line block, oldest first; no such section when there are none beside a
 *   previous summary, as in a call holding only parts of one), then the overlap clearly marked as context not
 *   to summarize (when any), then, with `options.lengthLimit`, the summary budget
 *   ({@link summaryLengthSection}).
 *
 * Stored system messages never appear: they are never in `toSummarize` or `overlap`. Pure; the
 * result is plain text (its size in tokens is whatever the caller's estimator says).
 */
export function buildSummarizerMessages(request: SummaryRequest, options: { lengthLimit?: SummaryLengthLimit } = {}): { system: string; user: string } {
  const parts: string[] = [];
  if (request.currentSummaries.length > 0) {
    parts.push(SUMMARIZER_SECTION.previousSummary, request.currentSummaries.join('\n\n'), '');
  }
  // A call holding only parts of a previous summary (split over the first calls) has no conversation section: an empty one read as missing input.
  const summaryOnly = request.toSummarize.length === 0 && request.currentSummaries.length > 0;
  if (!summaryOnly) parts.push(SUMMARIZER_SECTION.toSummarize, request.toSummarize.join('\n'));
  else parts.pop();
  if (request.overlap.length > 0) {
    parts.push('', SUMMARIZER_SECTION.context, request.overlap.join('\n'));
  }
  if (options.lengthLimit) parts.push('', summaryLengthSection(options.lengthLimit, summaryOnly ? 'summary' : 'conversation'));
  return { system: request.systemPrompt, user: parts.join('\n') };
}
