export * from './settlement-provider.port';
export * from './sandbox-rules';
export * from './sandbox-provider';
export * from './settlement.migrations';
export { SandboxLedger } from './sandbox-ledger.repository';
