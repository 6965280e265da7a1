/**
 * A session of three turns under two stored system messages (the first superseded by the second), as native events with
 * ids `<prefix>sys1`, `<prefix>u1`, `<prefix>a1`, `<prefix>sys2`, `<prefix>u2`, `<prefix>a2`, `<prefix>u3`, `<prefix>a3`:
 * `sliding-window` `maxEvents` 3 over it archives the strategy's cut (u1, a1, u2), the cut moved to the turn start (a2)
 * and the superseded system message (sys1), the specs of a compaction's archive reasons.
 */
export function turnsWithTwoSystemMessages(prefix: string): Array<{ id: string; type: 'system' | 'user' | 'assistant'; text: string }> {
  return [
    { id: `${prefix}sys1`, type: 'system', text: 'be helpful' },
    { id: `${prefix}u1`, type: 'user', text: 'first question' },
    { id: `${prefix}a1`, type: 'assistant', text: 'first answer' },
    { id: `${prefix}sys2`, type: 'system', text: 'be brief' },
    { id: `${prefix}u2`, type: 'user', text: 'second question' },
    { id: `${prefix}a2`, type: 'assistant', text: 'second answer' },
    { id: `${prefix}u3`, type: 'user', text: 'third question' },
    { id: `${prefix}a3`, type: 'assistant', text: 'third answer' },
  ];
}
