import { DynamicModule, Inject, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { LOGGER, type AppConfig } from '@app/core';
import { PROJECTIONS_ENABLED, SqlDatabase, SqlEventStore } from '@app/event-store';
import type { Logger } from '@app/http';
import { IdempotencyModule, IdempotencyService } from '@app/idempotency';
import { SigningKeyStore } from '@app/notary';
import { SandboxSettlementProvider, SettlementProvider } from '@app/settlement';
import { PoliciesController } from './policies/policies.controller';
import { PolicyService } from './policies/policy.service';
import { SPEND_LEDGER, SpendLedger } from './policies/spend-ledger';
import { ReceiptVerificationController, TransactionsController } from './http/transactions.controller';
import { RecordVerifier } from './receipts/record-verifier';
import { ExpirySweep } from './transactions/expiry-sweep';
import { RecordedSpendLedger } from './transactions/transaction.projection';
import { TransactionQueries } from './transactions/transaction.queries';
import { AuthorizationExpiry, TransactionService } from './transactions/transaction.service';

const COMMERCE_PROVIDER = Symbol('COMMERCE_SETTLEMENT_PROVIDER');

/** The expiry sweep (and the purge of idempotency keys past 24 h), run by every worker. */
const sweepProviders = (config: AppConfig) => [
  { provide: AuthorizationExpiry, useFactory: (db: SqlDatabase, store: SqlEventStore) => new AuthorizationExpiry(db, store), inject: [SqlDatabase, SqlEventStore] },
  {
    provide: ExpirySweep,
    useFactory: (expiry: AuthorizationExpiry, logger: Logger, idempotency: IdempotencyService) =>
      new ExpirySweep(expiry, config.COMMERCE_SWEEP_INTERVAL_MS, logger, [() => idempotency.purgeExpired()]),
    inject: [AuthorizationExpiry, LOGGER, IdempotencyService],
  },
];

/** Agent commerce: policies, authorization, human approval, settlement, receipts, timelines. */
@Module({})
export class CommerceModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    @Inject(ExpirySweep) private readonly sweep: ExpirySweep,
    @Inject(PROJECTIONS_ENABLED) private readonly workers: boolean,
  ) {}

  /** `settlementProvider`: the sandbox provider unless another is given (tests script outcomes). */
  static forRoot(config: AppConfig, options: { settlementProvider?: SettlementProvider } = {}): DynamicModule {
    return {
      module: CommerceModule,
      imports: [IdempotencyModule.forRoot()],
      controllers: [PoliciesController, TransactionsController, ReceiptVerificationController],
      providers: [
        { provide: SPEND_LEDGER, useFactory: (db: SqlDatabase) => new RecordedSpendLedger(db), inject: [SqlDatabase] },
        {
          provide: PolicyService,
          useFactory: (db: SqlDatabase, store: SqlEventStore, ledger: SpendLedger) => new PolicyService(db, store, ledger),
          inject: [SqlDatabase, SqlEventStore, SPEND_LEDGER],
        },
        { provide: COMMERCE_PROVIDER, useFactory: (db: SqlDatabase) => options.settlementProvider ?? new SandboxSettlementProvider(db), inject: [SqlDatabase] },
        {
          provide: TransactionService,
          useFactory: (db: SqlDatabase, store: SqlEventStore, policies: PolicyService, sandbox: SettlementProvider, keys: SigningKeyStore) =>
            new TransactionService(db, store, policies, { sandbox }, () => (message) => keys.current.sign(message), new URL(config.BASE_URL).host),
          inject: [SqlDatabase, SqlEventStore, PolicyService, COMMERCE_PROVIDER, SigningKeyStore],
        },
        {
          provide: TransactionQueries,
          useFactory: (db: SqlDatabase, store: SqlEventStore, policies: PolicyService) => new TransactionQueries(db, store, policies),
          inject: [SqlDatabase, SqlEventStore, PolicyService],
        },
        {
          provide: RecordVerifier,
          useFactory: (keys: SigningKeyStore) => new RecordVerifier((keyId, message, signature, signedAt) => keys.current.verify(keyId, message, signature, signedAt)),
          inject: [SigningKeyStore],
        },
        ...sweepProviders(config),
      ],
      exports: [PolicyService, SPEND_LEDGER, TransactionService, TransactionQueries, ExpirySweep],
    };
  }

  /** The worker role (`start:worker`): only the sweep, which signs nothing and serves nothing. */
  static forWorker(config: AppConfig): DynamicModule {
    return { module: CommerceModule, imports: [IdempotencyModule.forRoot()], providers: sweepProviders(config), exports: [ExpirySweep] };
  }

  onApplicationBootstrap(): void {
    // The worker role (WORKERS=on, or `start:worker`) sweeps; an api-only process does not.
    if (this.workers) this.sweep.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.sweep.stop();
  }
}
