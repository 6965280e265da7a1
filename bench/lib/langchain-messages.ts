/**
 * Our session events as LangChain JS messages and back as OpenAI chat messages: how the
 * benchmarks and the replay run LangChain's `trimMessages` on the same conversations as our
 * strategies (a user's usual alternative), with the same token costs.
 */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import type { SessionEvent } from '@lib/compaction';

/**
 * LangChain messages of `events` (ids kept), and each message id's cost (`costs[i]` is the cost of
 * `events[i]`, in the caller's estimator units): a token counter for `trimMessages` looks them up.
 * @throws Error on a summary event (LangChain has no such message).
 */
export function toLangChain(events: readonly SessionEvent[], costs: readonly number[]): { lc: BaseMessage[]; costOf: Map<string, number> } {
  const lc: BaseMessage[] = [];
  // Keyed by message id: trimMessages copies the messages, ids survive the copy.
  const costOf = new Map<string, number>();
  events.forEach((e, i) => {
    let m: BaseMessage;
    switch (e.type) {
      case 'system':
        m = new SystemMessage({ content: e.text ?? '', id: e.id });
        break;
      case 'user':
        m = new HumanMessage({ content: e.text ?? '', id: e.id });
        break;
      case 'assistant':
        m = new AIMessage({
          id: e.id,
          content: e.text ?? '',
          tool_calls: (e.toolCalls ?? []).map((c) => {
            let args: Record<string, unknown>;
            try {
              args = JSON.parse(c.arguments) as Record<string, unknown>;
            } catch {
              args = { __raw: c.arguments };
            }
            return { id: c.id, name: c.name, args, type: 'tool_call' as const };
          }),
        });
        break;
      case 'tool':
        // One ToolMessage per response (τ-bench has one response per tool event).
        m = new ToolMessage({ id: e.id, content: e.responses[0]?.data ?? '', tool_call_id: e.responses[0]?.toolCallId ?? '' });
        break;
      default:
        throw new Error(`unexpected event type ${e.type}`);
    }
    lc.push(m);
    costOf.set(e.id, costs[i]);
  });
  return { lc, costOf };
}

/** The LangChain type of a message (`system`, `human`, `ai`, `tool`), across @langchain/core versions. */
export function langChainType(m: BaseMessage): string {
  const x = m as unknown as { getType?: () => string; _getType: () => string };
  return x.getType ? x.getType() : x._getType();
}

/** LangChain messages → OpenAI chat messages (what would be sent to the provider). */
export function langChainToOpenAi(messages: readonly BaseMessage[]): Array<Record<string, unknown> | undefined> {
  return messages.map((m) => {
    if (m === undefined) return undefined; // trimMessages returns [undefined] when the system prompt alone exceeds the budget

    const content = typeof m.content === 'string' ? m.content : JSON.stringify(m.content);
    switch (langChainType(m)) {
      case 'system':
        return { role: 'system', content };
      case 'human':
        return { role: 'user', content };
      case 'ai': {
        const calls = (m as AIMessage).tool_calls ?? [];
        if (calls.length === 0) return { role: 'assistant', content };
        return {
          role: 'assistant',
          content: content === '' ? null : content,
          tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } })),
        };
      }
      case 'tool':
        return { role: 'tool', tool_call_id: (m as ToolMessage).tool_call_id, content };
      default:
        return { role: langChainType(m), content };
    }
  });
}
