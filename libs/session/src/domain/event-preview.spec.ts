import { PREVIEW_LENGTH, eventPreview } from './event-preview';

describe('eventPreview', () => {
  it('collapses spaces, tabs and line breaks to one space, and keeps every other character as stored (an audit view shows invisible ones)', () => {
    const text = '  first\r\nline\t\tsecond\u00a0nbsp \uFEFFzero-width\u2028separator\u202Eoverride  ';
    expect(eventPreview({ id: 'u1', type: 'user', text })).toBe('first line second\u00a0nbsp \uFEFFzero-width\u2028separator\u202Eoverride');
  });

  it('shows tool calls as name(arguments) and cuts at the preview length with an ellipsis', () => {
    const preview = eventPreview({ id: 'a1', type: 'assistant', text: null, toolCalls: [{ id: 'c', name: 'find', arguments: 'x'.repeat(500) }] });
    expect(preview.startsWith('find(xxx')).toBe(true);
    expect(preview).toHaveLength(PREVIEW_LENGTH);
    expect(preview.endsWith('…')).toBe(true);
  });

  it('given emoji, flags and ZWJ sequences past the preview length, when cut, then the preview is well-formed and ends on a whole grapheme (ncintl F6)', () => {
    const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
    for (const text of [
      '😀'.repeat(300),
      'x' + '😀'.repeat(300),
      '🇯🇵🇩🇪🇹🇭🇰🇷'.repeat(40),
      'x' + '🇯🇵🇩🇪'.repeat(60),
      '👩‍👩‍👧‍👦'.repeat(40),
      '👍🏽'.repeat(80),
      'न्दी'.repeat(60),
    ]) {
      const preview = eventPreview({ id: 'u1', type: 'user', text });
      expect((preview as string & { isWellFormed(): boolean }).isWellFormed()).toBe(true);
      expect(preview.length).toBeLessThanOrEqual(PREVIEW_LENGTH);
      expect(preview.endsWith('…')).toBe(true);
      const kept = preview.slice(0, -1);
      expect(text.startsWith(kept)).toBe(true);
      // the kept text ends where a grapheme of the whole text ends, and close to the limit (one grapheme short at most)
      const ends = new Set(Array.from(segmenter.segment(text), (g) => g.index));
      expect(ends.has(kept.length)).toBe(true);
      expect(kept.length).toBeGreaterThan(PREVIEW_LENGTH - 1 - 12);
    }
  });
});
