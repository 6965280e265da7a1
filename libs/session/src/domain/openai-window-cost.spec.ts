/**
 * The cost of the `openai` rendering (`tokens` of `format=openai`): what the messages carry,
 * under the estimator asked, in the DESIGN §3.1 accounting.
 */
import type { SessionEvent } from '@lib/compaction';
import { computeEventCosts } from './event-costs';
import { renderOpenAiWindow } from './openai-chat-format';
import { openAiRenderingCost } from './openai-window-cost';

const entriesOf = (events: SessionEvent[]) => events.map((event) => ({ event, costs: computeEventCosts(event) }));
const chars = (events: SessionEvent[]) => openAiRenderingCost(renderOpenAiWindow(events), entriesOf(events), 'chars');
const cost = (event: SessionEvent) => computeEventCosts(event).chars;

const s1: SessionEvent = { id: 's1', type: 'system', text: 'old instructions' };
const s2: SessionEvent = { id: 's2', type: 'system', text: 'instructions' };
const u1: SessionEvent = { id: 'u1', type: 'user', text: 'hello' };
const call: SessionEvent = {
  id: 'c1',
  type: 'assistant',
  text: null,
  toolCalls: [
    { id: 'k1', name: 'lookup', arguments: '{}' },
    { id: 'k2', name: 'fetch', arguments: '{"a":1}' },
  ],
};
const u2: SessionEvent = { id: 'u2', type: 'user', text: 'go on' };

describe('openAiRenderingCost', () => {
  it('is the sum of the stored costs when every event is rendered whole and no placeholder is added', () => {
    const answer: SessionEvent = {
      id: 't1',
      type: 'tool',
      responses: [
        { toolCallId: 'k1', name: 'lookup', data: 'x' },
        { toolCallId: 'k2', name: 'fetch', data: 'y' },
      ],
    };
    const events = [s2, u1, call, answer, u2];
    expect(chars(events)).toBe(events.reduce((sum, e) => sum + cost(e), 0));
    expect(openAiRenderingCost(renderOpenAiWindow(events), entriesOf(events), 'cl100k_base')).toBe(
      events.reduce((sum, e) => sum + computeEventCosts(e).cl100k_base, 0),
    );
  });

  it('leaves out superseded system messages, as the rendering does', () => {
    expect(chars([s1, s2, u1])).toBe(cost(s2) + cost(u1));
  });

  it('adds each placeholder answer as the tool event it stands for', () => {
    const placeholders = 'Tool [responses: lookup -> [no tool response recorded]]'.length + 'Tool [responses: fetch -> [no tool response recorded]]'.length;
    expect(chars([s2, u1, call, u2])).toBe(cost(s2) + cost(u1) + cost(call) + placeholders + cost(u2));
    // The newest message's calls may still be running: no placeholder, nothing added.
    expect(chars([u1, call])).toBe(cost(u1) + cost(call));
  });

  it('costs a tool event rendered in part as the event holding only the responses rendered, and one not rendered at all as nothing', () => {
    const partly: SessionEvent = {
      id: 't1',
      type: 'tool',
      responses: [
        { toolCallId: 'gone', name: 'other', data: 'not rendered' },
        { toolCallId: 'k1', name: 'lookup', data: 'x' },
        { toolCallId: 'k2', name: 'fetch', data: 'y' },
      ],
    };
    const orphan: SessionEvent = { id: 't0', type: 'tool', responses: [{ toolCallId: 'gone', name: 'other', data: 'orphan' }] };
    const renderedResponses = partly.responses.slice(1);
    const rendered: SessionEvent = { ...partly, responses: renderedResponses };
    expect(renderOpenAiWindow([u1, orphan, call, partly, u2]).shown).toEqual(['all', 'none', 'all', renderedResponses, 'all']);
    expect(chars([u1, orphan, call, partly, u2])).toBe(cost(u1) + cost(call) + cost(rendered) + cost(u2));
  });
});
