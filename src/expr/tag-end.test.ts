import { describe, expect, it } from 'vitest';
import { findExpressionEnd } from './tag-end.js';

describe('findExpressionEnd', () => {
  const end = (text: string): string | null => {
    const i = findExpressionEnd(text, 0);
    return i < 0 ? null : text.slice(0, i);
  };
  it('stops at the first }} outside quotes and brackets', () => {
    expect(end('a + 1}} rest}}')).toBe('a + 1');
    expect(end(`"}}" + '}}' + \`}}\`}}`)).toBe(`"}}" + '}}' + \`}}\``);
    expect(end('{"a": {"b": 1}}}}')).toBe('{"a": {"b": 1}}');
    expect(end('f(x[0])}}')).toBe('f(x[0])');
  });
  it('honours backslash escapes in single and double quotes, not in backquotes', () => {
    expect(end(String.raw`"a\"}}"}}`)).toBe(String.raw`"a\"}}"`);
    expect(end('`a\\`}}')).toBe('`a\\`');
  });
  it('reports -1 when nothing closes the tag', () => {
    expect(end('a + "}}')).toBeNull();
    expect(end('(a}}')).toBeNull();
    expect(end('')).toBeNull();
  });
});
