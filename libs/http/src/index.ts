export * from './error-response';
export * from './error-envelope.filter';
export * from './zod-body.pipe';
export * from './logger';
export * from './request-id';
export * from './openapi';
export * from './page-cursor';
export * from './error-catalog';
