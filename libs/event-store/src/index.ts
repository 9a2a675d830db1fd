export * from './event-store.port';
export * from './hash-chain';
export * from './sql/sql-database';
export * from './sql/migrations';
export * from './sql/sql-event-store';
export * from './projections/projection-runner';
export * from './open-event-store';
export { PgDatabase } from './adapters/pg-database';
export { PgliteDatabase } from './adapters/pglite-database';
