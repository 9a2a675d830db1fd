import { PipeTransform } from '@nestjs/common';
import type { ZodType } from 'zod';
import { AppError } from '@app/core';

export interface FieldIssue {
  field: string;
  message: string;
}

/** Validates (and narrows) a body, query or params object; failures are 400 with every field named. */
export class ZodPipe<T> implements PipeTransform<unknown, T> {
  constructor(
    private readonly schema: ZodType<T>,
    private readonly what: 'body' | 'query' | 'params' = 'body',
  ) {}

  transform(value: unknown): T {
    if (this.what === 'body' && (value === undefined || value === null)) {
      throw new AppError('validation_failed', 'A JSON request body is required', 400, [{ field: '', message: 'required' }]);
    }
    const result = this.schema.safeParse(value);
    if (result.success) return result.data;
    const details: FieldIssue[] = result.error.issues.map((i) => ({ field: i.path.join('.'), message: i.message }));
    throw new AppError('validation_failed', `Invalid ${this.what}: ${details.map((d) => d.field || this.what).join(', ')}`, 400, details);
  }
}
