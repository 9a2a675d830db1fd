import type { ZodError } from 'zod';
import { AppError } from '@app/core';

export interface FieldIssue {
  /** Dotted path of the failing field ('' for the document itself). */
  field: string;
  message: string;
}

/** Zod issues as `{field, message}`, one per field; an unknown key is named as its own field. */
export function fieldIssues(error: ZodError): FieldIssue[] {
  const out: FieldIssue[] = [];
  for (const issue of error.issues) {
    const path = issue.path.map(String);
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ field: [...path, key].join('.'), message: 'is not a known field' });
    } else {
      out.push({ field: path.join('.'), message: issue.message });
    }
  }
  return out;
}

/** The 400 for a document that breaks its schema, with every failing field in `details`. */
export function invalid(code: string, what: string, error: ZodError): AppError {
  const details = fieldIssues(error);
  const fields = [...new Set(details.map((d) => d.field || what))];
  return new AppError(code, `Invalid ${what}: ${fields.slice(0, 10).join(', ')}${fields.length > 10 ? ', …' : ''}`, 400, details);
}

/** Zod's `error` option: "is required" when the field is absent, else what it must be. */
export const required = (expected: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? 'is required' : `must be ${expected}`;
