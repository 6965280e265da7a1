/**
 * The cost of a window as rendered for a model (`format=openai`): what the messages carry, under
 * one estimator, in the DESIGN §3.1 accounting. Pure.
 */
import { eventCost, getEstimator, placeholderAnswerEvent, type SessionEvent } from '@lib/compaction';
import type { EstimatorName, EventCosts } from '../events/session-stream-events';
import type { OpenAiRendering } from './openai-chat-format';

/**
 * The cost (tokens, or UTF-16 code units for `chars`) of `rendering`, the rendering of `entries`
 * (same order) by `renderOpenAiWindow`: the stored cost of each event it carries whole; for a tool
 * event carried in part, the cost of the tool event holding only the responses rendered; nothing
 * for what it leaves out (superseded system messages, responses with no call in the window); and
 * for each placeholder answer, the cost of the tool event `{ name -> [no tool response recorded] }`
 * it stands for. Equals the sum of `entries`' costs when the rendering carries every event whole
 * and adds no placeholder. O(entries), plus the estimator over what is costed anew.
 */
export function openAiRenderingCost(
  rendering: OpenAiRendering,
  entries: ReadonlyArray<{ event: SessionEvent; costs: EventCosts }>,
  estimator: EstimatorName,
): number {
  let total = 0;
  rendering.shown.forEach((part, i) => {
    const { event, costs } = entries[i];
    if (part === 'all') total += costs[estimator];
    else if (part !== 'none' && event.type === 'tool') total += eventCost({ ...event, responses: part }, getEstimator(estimator));
  });
  for (const call of rendering.placeholders) total += eventCost(placeholderAnswerEvent(call), getEstimator(estimator));
  return total;
}
