import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { port, positiveInt } from './option-values.js';

describe('option values', () => {
  it('takes whole numbers of at least 1 and refuses the rest', () => {
    expect(positiveInt('8')).toBe(8);
    for (const bad of ['0', '-1', '1.5', 'eight', '']) expect(() => positiveInt(bad)).toThrow(InvalidArgumentError);
  });

  it('takes ports 0 to 65535 and refuses the rest', () => {
    expect(port('0')).toBe(0);
    expect(port('65535')).toBe(65535);
    for (const bad of ['65536', '-1', '80.5', 'http']) expect(() => port(bad)).toThrow(/expected a port number/);
  });
});
