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
});
