export * from './settlement-provider.port';
export * from './sandbox-provider';
