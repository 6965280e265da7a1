/**
 * DESIGN §3.2: an open call is abandoned once a user event follows it, and every rendering to a
 * model has already shown the placeholder answer `[no tool response recorded]` after it. The
 * summarizer's input follows the same rule (`placeholderAnsweredCalls`, the function the OpenAI
 * window rendering uses): an archived abandoned call is followed by its placeholder answer line
 * (newcomer ncllm: the summarizer saw `Assistant [tool calls: abandoned({})]` and nothing after it).
 */
import {
  costEvents,
  formatEventWithPlaceholders,
  getEstimator,
  NO_TOOL_RESPONSE,
  placeholderAnsweredCalls,
  planCompaction,
  type SessionEvent,
  type Strategy,
} from '../src';

const RECURSIVE: Strategy = { type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 0 } as Strategy;

function plan(events: SessionEvent[], strategy: Strategy = RECURSIVE) {
  return planCompaction(costEvents(events, getEstimator('cl100k_base')), strategy, null);
}

const abandonedCall = { id: 'c1', name: 'abandoned', arguments: '{}' };

describe('the summarizer input shows the placeholder answer after an abandoned call', () => {
  it('follows an archived call nobody answered with `Tool [responses: <name> -> [no tool response recorded]]`', () => {
    const events: SessionEvent[] = [
      { id: 'u1', type: 'user', text: 'book it' },
      { id: 'a1', type: 'assistant', text: null, toolCalls: [abandonedCall] },
      { id: 'u2', type: 'user', text: 'never mind' },
      { id: 'a2', type: 'assistant', text: 'ok' },
      { id: 'u3', type: 'user', text: 'next' },
      { id: 'a3', type: 'assistant', text: 'sure' },
    ];
    const request = plan(events).summaryRequest!;
    expect(request.toSummarize).toEqual([
      'User: book it',
      `Assistant [tool calls: abandoned({})]\nTool [responses: abandoned -> ${NO_TOOL_RESPONSE}]`,
      'User: never mind',
      'Assistant: ok',
    ]);
  });

  it('adds nothing after an answered call, and one line per unanswered call of an event, in its order', () => {
    const events: SessionEvent[] = [
      { id: 'u1', type: 'user', text: 'look up both' },
      {
        id: 'a1',
        type: 'assistant',
        text: 'checking',
        toolCalls: [
          { id: 'k1', name: 'lookup', arguments: '{"q":1}' },
          { id: 'k2', name: 'fetch', arguments: '{"q":2}' },
          { id: 'k3', name: 'search', arguments: '{"q":3}' },
        ],
      },
      { id: 't1', type: 'tool', responses: [{ toolCallId: 'k2', name: 'fetch', data: 'found' }] },
      { id: 'u2', type: 'user', text: 'go on' },
      { id: 'a2', type: 'assistant', text: 'ok' },
      { id: 'u3', type: 'user', text: 'next' },
      { id: 'a3', type: 'assistant', text: 'sure' },
    ];
    const request = plan(events).summaryRequest!;
    expect(request.toSummarize.slice(1, 3)).toEqual([
      `Assistant: checking [tool calls: lookup({"q":1}), fetch({"q":2}), search({"q":3})]\nTool [responses: lookup -> ${NO_TOOL_RESPONSE}]\nTool [responses: search -> ${NO_TOOL_RESPONSE}]`,
      'Tool [responses: fetch -> found]',
    ]);
  });

  it('is the rule of every rendering: no placeholder for the newest message’s calls (still running) unless the conversation goes on', () => {
    const events: SessionEvent[] = [
      { id: 'u1', type: 'user', text: 'hi' },
      { id: 'a1', type: 'assistant', text: null, toolCalls: [abandonedCall] },
      { id: 's1', type: 'system', text: 'pinned' },
    ];
    expect(placeholderAnsweredCalls(events)).toEqual(new Map());
    expect(placeholderAnsweredCalls(events, true)).toEqual(new Map([[1, [abandonedCall]]]));
    expect(formatEventWithPlaceholders(events[1], [abandonedCall])).toBe(
      `Assistant [tool calls: abandoned({})]\nTool [responses: abandoned -> ${NO_TOOL_RESPONSE}]`,
    );
    expect(formatEventWithPlaceholders(events[1])).toBe('Assistant [tool calls: abandoned({})]');
  });
});
