import { describe, expect, it } from 'vitest';
import { escapeVars, expandVars } from './expand-vars.js';

const env = { NAME: 'world', EMPTY: '', DOLLAR: '$(NAME)' };

describe('expandVars', () => {
  it('replaces a defined reference by its value', () => {
    expect(expandVars('hello $(NAME)!', env)).toBe('hello world!');
    expect(expandVars('$(NAME)$(NAME)', env)).toBe('worldworld');
    expect(expandVars('[$(EMPTY)]', env)).toBe('[]');
  });

  it('leaves an unresolved reference unchanged', () => {
    expect(expandVars('a $(MISSING) b', env)).toBe('a $(MISSING) b');
  });

  it('turns $$ into $ and $$(X) into the literal $(X)', () => {
    expect(expandVars('cost: $$5', env)).toBe('cost: $5');
    expect(expandVars('$$(NAME)', env)).toBe('$(NAME)');
    expect(expandVars('$$$(NAME)', env)).toBe('$world');
    expect(expandVars('$$$$(NAME)', env)).toBe('$$(NAME)');
  });

  it('keeps a lone $ and an unclosed reference as written', () => {
    expect(expandVars('$HOME and $ and $', env)).toBe('$HOME and $ and $');
    expect(expandVars('echo $(NAME', env)).toBe('echo $(NAME');
  });

  it('does not expand a value a second time', () => {
    expect(expandVars('$(DOLLAR)', env)).toBe('$(NAME)');
  });

  it('accepts a lookup function', () => {
    expect(expandVars('$(A)-$(B)', (n) => (n === 'A' ? '1' : undefined))).toBe('1-$(B)');
  });
});

describe('escapeVars', () => {
  it('round-trips any text through expandVars', () => {
    for (const text of ['echo $$ $(NAME) $$(NAME)', 'x=$((1+2)); echo "$x"', 'price $5', '$', '']) {
      expect(expandVars(escapeVars(text), env)).toBe(text);
    }
  });
});
