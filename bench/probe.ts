import { trimMessages } from '@langchain/core/messages';
import { loadTauBench } from './lib/corpus';
(async () => {
  const { runPlannerVsLangChain } = require('./figures/planner-vs-langchain');
  const { HumanMessage, AIMessage, SystemMessage, ToolMessage } = require('@langchain/core/messages');
  const c = loadTauBench()![0];
  const lc = c.messages.map((m: any) => m.role === 'system' ? new SystemMessage(m.content) : m.role === 'user' ? new HumanMessage(m.content) : m.role === 'tool' ? new ToolMessage({ content: m.content, tool_call_id: m.tool_call_id }) : new AIMessage({ content: m.content ?? '', tool_calls: (m.tool_calls ?? []).map((t: any) => ({ id: t.id, name: t.function.name, args: JSON.parse(t.function.arguments), type: 'tool_call' })) }));
  let calls = 0;
  const r: any = await trimMessages(lc, { maxTokens: 2000, strategy: 'last', startOn: 'human', includeSystem: true, tokenCounter: (ms: any[]) => { calls++; if (ms.some((x) => x === undefined)) { console.log('undefined in', ms.length, ms.map((x) => x === undefined)); throw new Error('x'); } return ms.reduce((s, m) => s + String(m.content).length / 4, 0); } });
  console.log(r.length, calls);
})().catch((e) => console.log('ERR', e.message));
