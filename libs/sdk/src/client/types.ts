/**
 * Request and response types of the client, all derived from the types generated from the
 * service's own /openapi.json (src/generated/openapi.ts, `npm run sdk:generate`), so they cannot
 * drift from what the service accepts and answers.
 */
import type { components, operations, paths } from '../generated/openapi';

export type { components, operations, paths };

/** Every named schema of the service's OpenAPI document, e.g. `SigilSchemas['Transaction']`. */
export type SigilSchemas = components['schemas'];

/** An operation of the document, by its operationId (the same name as the client's method). */
export type OperationId = keyof operations;

type SuccessStatus = 200 | 201 | 202 | 204;
type ContentOf<R> = R extends { content: infer C } ? C[keyof C] : void;

/** The success body of an operation (void for 204). */
export type ResponseOf<K extends OperationId> = ContentOf<operations[K]['responses'][Extract<keyof operations[K]['responses'], SuccessStatus>]>;

/** The JSON request body of an operation. */
export type BodyOf<K extends OperationId> = operations[K] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

/** The query parameters of an operation. */
export type QueryOf<K extends OperationId> = NonNullable<operations[K]['parameters']['query']>;

// Names for the shapes used most, as before the client was generated.
export type IssueCertificateRequest = BodyOf<'issueCertificate'>;
export type IssuanceResponse = SigilSchemas['IssuanceResponse'];
export type VerifyRequest = BodyOf<'verify'>;
export type VerificationResult = SigilSchemas['VerificationResult'];
export type VerificationReport = SigilSchemas['VerificationReport'];
export type VerifyHashRequest = BodyOf<'verifyHash'>;
export type HashVerificationResult = SigilSchemas['HashVerificationResult'];
export type PredictionProofResponse = SigilSchemas['PredictionProof'];
export type RegistryQuery = QueryOf<'listRegistry'>;
export type RegistryEntry = SigilSchemas['RegistryEntry'];
export type RegistryPage = SigilSchemas['RegistryPage'];
export type QuotaState = SigilSchemas['QuotaState'];
export type CreditsCheckout = SigilSchemas['CreditsCheckout'];
/** payment_authorization.v1 */
export type AuthorizationRequest = SigilSchemas['AuthorizationRequest'];
export type AuthorizationDecision = SigilSchemas['AuthorizationDecision'];
export type PolicyDocument = SigilSchemas['PolicyDocument'];
export type PolicyVersion = SigilSchemas['PolicyVersion'];
export type PolicySimulation = SigilSchemas['PolicySimulation'];
export type Transaction = SigilSchemas['Transaction'];
export type TransactionQuery = QueryOf<'listTransactions'>;
export type TransactionPage = SigilSchemas['TransactionPage'];
export type ExecutionResult = SigilSchemas['ExecutionResult'];
/** GET /api/cdp/transactions/{id}/events, checkable offline with verifyTimeline. */
export type TransactionTimeline = SigilSchemas['TransactionTimeline'];
export type TransactionReplay = SigilSchemas['TransactionReplay'];
export type ReceiptVerificationResult = SigilSchemas['ReceiptVerification'];
export type WebhookEndpoint = SigilSchemas['WebhookEndpoint'];
export type WebhookDelivery = SigilSchemas['WebhookDelivery'];
export type WebhookDeliveryDetail = SigilSchemas['WebhookDeliveryDetail'];
export type WebhookBody = SigilSchemas['WebhookBody'];
