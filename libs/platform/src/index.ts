export * from './platform.module';
export * from './lifecycle';
export * from './readiness';
