import { describe, expect, it } from 'vitest';
import { compileDepends, type DependencyState } from './depends.js';
import { ExprError } from './errors.js';

const ok: DependencyState = { phase: 'Succeeded' };
const failed: DependencyState = { phase: 'Failed' };

describe('depends', () => {
  it('a bare task means Succeeded, Skipped or Daemoned (and Failed/Errored with continueOn)', () => {
    const d = compileDepends('A');
    expect(d.evaluate({ A: ok })).toBe(true);
    expect(d.evaluate({ A: { phase: 'Skipped' } })).toBe(true);
    expect(d.evaluate({ A: { phase: 'Running', daemoned: true } })).toBe(true);
    expect(d.evaluate({ A: { phase: 'Pending', daemoned: true } })).toBe(false);
    expect(d.evaluate({ A: failed })).toBe(false);
    expect(d.evaluate({ A: { phase: 'Omitted' } })).toBe(false);
    expect(d.evaluate({ A: { phase: 'Failed', continueOn: { failed: true } } })).toBe(true);
    expect(d.evaluate({ A: { phase: 'Error', continueOn: { error: true } } })).toBe(true);
    expect(d.evaluate({ A: { phase: 'Error', continueOn: { failed: true } } })).toBe(false);
  });

  it('evaluates results, operators, precedence and parentheses', () => {
    const tasks = { 'task-1': failed, 'task-2': { phase: 'Error' }, t3: ok };
    expect(compileDepends('task-1.Failed && task-2.Errored').evaluate(tasks)).toBe(true);
    expect(compileDepends('task-1.Succeeded || task-2.Errored && t3').evaluate(tasks)).toBe(true);
    expect(compileDepends('(task-1.Succeeded || task-2.Errored) && !t3').evaluate(tasks)).toBe(false);
    expect(compileDepends('!!t3').evaluate(tasks)).toBe(true);
  });

  it('AnySucceeded and AllFailed look at the children of task groups', () => {
    const group = (...children: string[]): DependencyState => ({ phase: 'Failed', type: 'TaskGroup', children });
    expect(compileDepends('g.AnySucceeded').evaluate({ g: group('Failed', 'Succeeded') })).toBe(true);
    expect(compileDepends('g.AnySucceeded').evaluate({ g: group('Failed', 'Failed') })).toBe(false);
    expect(compileDepends('g.AllFailed').evaluate({ g: group('Failed', 'Failed') })).toBe(true);
    expect(compileDepends('g.AllFailed').evaluate({ g: group() })).toBe(false);
    expect(compileDepends('g.AllFailed').evaluate({ g: { phase: 'Failed', children: [{ phase: 'Failed' }] } })).toBe(true);
  });

  it('lists the tasks it names', () => {
    expect(compileDepends('(a || b-c.Failed) && !a.Skipped').taskNames).toEqual(['a', 'b-c']);
  });

  it('reports unknown tasks, unknown results and syntax errors with a caret', () => {
    expect(() => compileDepends('A and not B.Failed')).toThrow(/unexpected "a" \(operators are &&, \|\| and !\)/);
    expect(() => compileDepends('A && C').evaluate({ A: ok, B: ok })).toThrow(
      /depends refers to task "C", which is not a task of this DAG \(tasks: A, B\)/,
    );
    const err = (() => {
      try {
        compileDepends('A.Succeded');
      } catch (e) {
        return e as ExprError;
      }
      throw new Error('no error');
    })();
    expect(err).toBeInstanceOf(ExprError);
    expect(err.message).toBe(
      'depends: unknown task result "Succeded" of A (expected one of Succeeded, Failed, Errored, Skipped, Omitted, Daemoned, AnySucceeded, AllFailed) at 1:3\n  A.Succeded\n    ^^^^^^^^',
    );
    expect(() => compileDepends('A &')).toThrow(/unexpected "&" \(operators are &&, \|\| and !\)/);
    expect(() => compileDepends('A && &')).toThrow(/expected a task name, found "&"/);
    expect(() => compileDepends('(A || B')).toThrow(/missing "\)"/);
    expect(() => compileDepends('')).toThrow(/depends is empty/);
    expect(() => compileDepends('A B')).toThrow(/unexpected "B"/);
    expect(() => compileDepends('!'.repeat(5000) + 'A')).toThrow(/nested more than 100 levels/);
    expect(() => compileDepends('('.repeat(5000) + 'A')).toThrow(/nested more than 100 levels/);
  });
});
