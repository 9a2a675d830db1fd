import { DynamicModule, Inject, Module, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { Clock, LOGGER, systemClock, type AppConfig } from '@app/core';
import { EventStore, PROJECTIONS_ENABLED, SqlDatabase } from '@app/event-store';
import type { Logger } from '@app/http';
import { IdempotencyModule, IdempotencyService } from '@app/idempotency';
import { SigningKeysModule, SigningKeyStore } from '@app/notary';
import { SandboxLedger, SandboxSettlementProvider, SettlementProvider } from '@app/settlement';
import { PoliciesController } from './policies/policies.controller';
import { PolicyService } from './policies/policy.service';
import { PolicyReadModel, PolicyRepository } from './policies/policy.repository';
import { PutPolicyController } from './put-policy/put-policy.controller';
import { PutPolicyHandler } from './put-policy/put-policy.handler';
import { SPEND_LEDGER, SpendLedger } from './policies/spend-ledger';
import { ReceiptVerificationController, TransactionsController } from './http/transactions.controller';
import { RecordVerifier } from './receipts/record-verifier';
import { ExpirySweep } from './transactions/expiry-sweep';
import { RecordedSpendLedger } from './transactions/spend.repository';
import { TransactionQueries } from './transactions/transaction.queries';
import { ExecutePaymentController } from './execute-payment/execute-payment.controller';
import { ExecutePaymentHandler, SETTLEMENT_PROVIDERS, SettlementProviders } from './execute-payment/execute-payment.handler';
import { AuthorizePaymentController } from './authorize-payment/authorize-payment.controller';
import { AuthorizePaymentHandler, CURRENT_POLICIES } from './authorize-payment/authorize-payment.handler';
import { CommerceAuthority } from './authorize-payment/commerce-authority';
import { TransactionRepository } from './transactions/transaction.repository';
import { SqlTransactionRows, TransactionRows } from './transactions/transaction-rows.repository';
import { COMMERCE_CLOCK } from './transactions/commerce-clock';
import { ApproveAuthorizationController } from './approve-authorization/approve-authorization.controller';
import { ApproveAuthorizationHandler } from './approve-authorization/approve-authorization.handler';
import { RejectAuthorizationController } from './reject-authorization/reject-authorization.controller';
import { RejectAuthorizationHandler } from './reject-authorization/reject-authorization.handler';
import { ReviewRules } from './transactions/review-rules';
import { QuotePaymentController } from './quote-payment/quote-payment.controller';
import { QuotePaymentHandler } from './quote-payment/quote-payment.handler';
import { DemoDecisionController } from './demo-decision/demo-decision.controller';
import { DemoDecisionHandler } from './demo-decision/demo-decision.handler';
import { AccessReadModel } from '@app/access';
import { ExpireAuthorizationsCommand } from './expire-authorizations/expire-authorizations.command';
import { ExpireAuthorizationsHandler } from './expire-authorizations/expire-authorizations.handler';
import { AnchorTimelinesCommand } from './anchor-timelines/anchor-timelines.command';
import { AnchorTimelinesHandler } from './anchor-timelines/anchor-timelines.handler';
import { TimelineAnchorSweep } from './anchor-timelines/timeline-anchor-sweep';

const COMMERCE_PROVIDER = Symbol('COMMERCE_SETTLEMENT_PROVIDER');

/**
 * What every commerce role needs: the transactions' repository and rows, the clock, the expiry
 * sweep. A role that signs (the api: `CommerceAuthority` holds the signing key) anchors every
 * timeline it ends; the worker holds no key and leaves its expiries' anchors to the api's sweep.
 */
const coreProviders = (config: AppConfig, signs: boolean) => [
  signs
    ? {
        provide: TransactionRepository,
        useFactory: (store: EventStore, authority: CommerceAuthority, clock: Clock, logger: Logger) =>
          new TransactionRepository(store, {
            issuer: authority.issuer,
            sign: authority.sign,
            refresh: () => authority.refresh(),
            clock,
            onError: (err, transactionId) => logger.warn({ err: (err as Error).message, transaction_id: transactionId }, 'timeline anchor not written; the anchoring sweep writes it'),
          }),
        inject: [EventStore, CommerceAuthority, COMMERCE_CLOCK, LOGGER],
      }
    : { provide: TransactionRepository, useFactory: (store: EventStore) => new TransactionRepository(store), inject: [EventStore] },
  { provide: TransactionRows, useFactory: (db: SqlDatabase) => new SqlTransactionRows(db), inject: [SqlDatabase] },
  { provide: COMMERCE_CLOCK, useValue: systemClock },
  ExpireAuthorizationsHandler,
  // The expiry sweep (and the purge of idempotency keys past 24 h), run by every worker.
  {
    provide: ExpirySweep,
    useFactory: (expire: ExpireAuthorizationsHandler, logger: Logger, idempotency: IdempotencyService) =>
      new ExpirySweep((limit) => expire.execute(new ExpireAuthorizationsCommand(limit)), config.COMMERCE_SWEEP_INTERVAL_MS, logger, [() => idempotency.purgeExpired()]),
    inject: [ExpireAuthorizationsHandler, LOGGER, IdempotencyService],
  },
];

/** Agent commerce: policies, authorization, human approval, settlement, receipts, timelines. */
@Module({})
export class CommerceModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    @Inject(ExpirySweep) private readonly sweep: ExpirySweep,
    @Inject(PROJECTIONS_ENABLED) private readonly workers: boolean,
    @Optional() @Inject(TimelineAnchorSweep) private readonly anchorSweep?: TimelineAnchorSweep,
  ) {}

  /** `settlementProvider`: the sandbox provider unless another is given (tests script outcomes). */
  static forRoot(config: AppConfig, options: { settlementProvider?: SettlementProvider } = {}): DynamicModule {
    return {
      module: CommerceModule,
      imports: [CqrsModule, IdempotencyModule.forRoot(), SigningKeysModule],
      controllers: [DemoDecisionController, QuotePaymentController, PutPolicyController, PoliciesController, AuthorizePaymentController, ExecutePaymentController, TransactionsController, ApproveAuthorizationController, RejectAuthorizationController, ReceiptVerificationController],
      providers: [
        { provide: SPEND_LEDGER, useFactory: (db: SqlDatabase) => new RecordedSpendLedger(db), inject: [SqlDatabase] },
        {
          provide: PolicyService,
          useFactory: (db: SqlDatabase, ledger: SpendLedger) => new PolicyService(new PolicyReadModel(db), ledger),
          inject: [SqlDatabase, SPEND_LEDGER],
        },
        { provide: PolicyRepository, useFactory: (store: EventStore) => new PolicyRepository(store), inject: [EventStore] },
        PutPolicyHandler,
        { provide: COMMERCE_PROVIDER, useFactory: (db: SqlDatabase) => options.settlementProvider ?? new SandboxSettlementProvider(new SandboxLedger(db)), inject: [SqlDatabase] },
        // Live keys settle through `live` once a live provider is configured; none is yet.
        { provide: SETTLEMENT_PROVIDERS, useFactory: (sandbox: SettlementProvider): SettlementProviders => ({ sandbox }), inject: [COMMERCE_PROVIDER] },
        ExecutePaymentHandler,
        {
          provide: CommerceAuthority,
          // No live settlement provider is configured yet: live-mode transactions are decided but cannot execute.
          useFactory: (keys: SigningKeyStore): CommerceAuthority => ({
            issuer: new URL(config.BASE_URL).host,
            sign: (message) => keys.current.sign(message),
            liveProvider: false,
            // A coalesced reload that starts after the refusal (as the notary's CertificateAuthority).
            refresh: async () => void (await keys.refresh()),
          }),
          inject: [SigningKeyStore],
        },
        { provide: CURRENT_POLICIES, useExisting: PolicyService },
        AuthorizePaymentHandler,
        {
          provide: TransactionQueries,
          useFactory: (rows: TransactionRows, store: EventStore, policies: PolicyService, verifier: RecordVerifier) => new TransactionQueries(rows, store, policies, verifier),
          inject: [TransactionRows, EventStore, PolicyService, RecordVerifier],
        },
        {
          provide: RecordVerifier,
          useFactory: (keys: SigningKeyStore) => new RecordVerifier((keyId, message, signature, signedAt) => keys.current.verify(keyId, message, signature, signedAt)),
          inject: [SigningKeyStore],
        },
        ...coreProviders(config, true),
        AnchorTimelinesHandler,
        {
          provide: TimelineAnchorSweep,
          useFactory: (anchor: AnchorTimelinesHandler, logger: Logger) =>
            new TimelineAnchorSweep((limit) => anchor.execute(new AnchorTimelinesCommand(limit)), config.COMMERCE_SWEEP_INTERVAL_MS, logger, [], 'anchoring sweep'),
          inject: [AnchorTimelinesHandler, LOGGER],
        },
        {
          provide: ReviewRules,
          // Key owners and creators come from the access read model, through its own repository.
          useFactory: (policies: PolicyService, db: SqlDatabase) => {
            const keys = new AccessReadModel(db);
            return new ReviewRules({
              policyVersion: (orgId, policyId, version) => policies.version(orgId, policyId, version),
              key: async (orgId, keyId) => {
                const row = await keys.keyRow(keyId);
                return row && row.org_id === orgId ? { owner: row.owner ?? null, createdBy: row.created_by ?? null } : null;
              },
            });
          },
          inject: [PolicyService, SqlDatabase],
        },
        ApproveAuthorizationHandler,
        RejectAuthorizationHandler,
        QuotePaymentHandler,
        DemoDecisionHandler,
      ],
      exports: [PolicyService, SPEND_LEDGER, TransactionQueries, ExpirySweep, TimelineAnchorSweep, AnchorTimelinesHandler],
    };
  }

  /** The worker role (`start:worker`): only the sweep, which signs nothing and serves nothing. */
  static forWorker(config: AppConfig): DynamicModule {
    return { module: CommerceModule, imports: [CqrsModule, IdempotencyModule.forRoot()], providers: coreProviders(config, false), exports: [ExpirySweep] };
  }

  onApplicationBootstrap(): void {
    // The worker role (WORKERS=on, or `start:worker`) sweeps; an api-only process does not.
    if (this.workers) this.sweep.start();
    // Every process that signs anchors what is owed: at once (the backfill of timelines that ended
    // before anchors existed), then on the sweep's interval.
    this.anchorSweep?.start({ now: true });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.sweep.stop();
    await this.anchorSweep?.stop();
  }
}
