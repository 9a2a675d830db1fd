export * from './domain/api-key';
export * from './domain/agent-did';
export * from './domain/scopes';
export * from './domain/lanes';
export * from './keys/access.events';
export * from './keys/access.migrations';
export * from './keys/access.service';
