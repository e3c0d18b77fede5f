/**
 * Errors that name the field at fault. One FieldError is one problem; a ValidationError carries
 * all problems found in one object so the user can fix them in one go.
 */
import { fieldText, type FieldRef } from './field-path.js';

/** One problem: `<field> <detail>`, e.g. `spec.entrypoint is required`. */
export class FieldError extends Error {
  readonly field: string;
  readonly detail: string;

  constructor(field: FieldRef, detail: string) {
    const f = fieldText(field);
    super(`${f} ${detail}`);
    this.name = 'FieldError';
    this.field = f;
    this.detail = detail;
  }
}

/** Several problems in one object, e.g. `Workflow ns/name is invalid: a; b`. */
export class ValidationError extends Error {
  readonly issues: readonly FieldError[];

  constructor(subject: string, issues: readonly FieldError[]) {
    const list = issues.map((i) => i.message).join('; ');
    super(subject ? `${subject} is invalid: ${list}` : list);
    this.name = 'ValidationError';
    this.issues = issues;
  }
}

/**
 * Collects problems while a validator walks an object. `check` runs a parser that throws
 * FieldError and records the error instead of stopping, so one pass reports everything.
 */
export class Issues {
  private readonly list: FieldError[] = [];

  add(field: FieldRef, detail: string): void {
    this.list.push(new FieldError(field, detail));
  }

  /** Runs `fn`; a FieldError it throws is recorded and `undefined` returned. Other errors escape. */
  check<T>(fn: () => T): T | undefined {
    try {
      return fn();
    } catch (err) {
      if (err instanceof FieldError) {
        this.list.push(err);
        return undefined;
      }
      if (err instanceof ValidationError) {
        this.list.push(...err.issues);
        return undefined;
      }
      throw err;
    }
  }

  get ok(): boolean {
    return this.list.length === 0;
  }

  get all(): readonly FieldError[] {
    return this.list;
  }

  /** Throws a ValidationError naming `subject` (e.g. `Workflow default/hello`) if any problem was found. */
  throwIfAny(subject: string): void {
    if (this.list.length > 0) throw new ValidationError(subject, [...this.list]);
  }
}
