export * from './domain/currencies';
export * from './domain/iso-instant';
export * from './domain/fields';
export * from './domain/authorization-request';
export * from './domain/policy';
export * from './domain/evaluate';
export * from './domain/lifecycle';
