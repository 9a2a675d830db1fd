export * from './domain/currencies';
export * from './domain/iso-instant';
export * from './domain/fields';
export * from './domain/authorization-request';
export * from './domain/policy';
export * from './domain/evaluate';
export * from './domain/lifecycle';
export * from './policies/policy.events';
export * from './policies/policies.migrations';
export * from './policies/spend-ledger';
export * from './policies/policy.service';
export * from './commerce.module';
export * from './receipts/signed-record';
export * from './receipts/record-verifier';
export * from './transactions/transaction.events';
export * from './transactions/transactions.migrations';
export * from './transactions/transaction.projection';
export type { TransactionRow } from './transactions/transaction-row';
export type { ExecutionResult } from './execute-payment/execute-payment.handler';
export * from './transactions/transaction.queries';
export * from './transactions/expiry-sweep';
export { transactionsProjection } from './transactions/transaction.projection';
export { policiesProjection } from './policies/policy.projection';
// The console dispatches the API's own review commands.
export { ApproveAuthorizationCommand } from './approve-authorization/approve-authorization.command';
export { RejectAuthorizationCommand } from './reject-authorization/reject-authorization.command';
// The console records policy versions with the API's own command.
export { PutPolicyCommand } from './put-policy/put-policy.command';
