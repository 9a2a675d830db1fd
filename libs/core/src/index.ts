export * from './errors';
export * from './ids';
export * from './clock';
export * from './config';
export * from './key-encryption-key';
export * from './redis';
export * from './tokens';
export * from './caching';
