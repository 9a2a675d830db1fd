export * from './idempotency-key';
export * from './idempotency.migrations';
export * from './idempotency.service';
export * from './http/idempotent.metadata';
export * from './http/idempotent.decorator';
export * from './http/idempotent-call';
export * from './http/idempotency.module';
export * from './sealed-response';
