import { DynamicModule, Inject, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { IdempotencyModule } from '@app/idempotency';
import { AppConfig, LOGGER, PeriodicSweep, systemClock } from '@app/core';
import { EventStore, InlineProjection, SqlDatabase } from '@app/event-store';
import { CertificateService } from '../certificates/certificate.service';
import { CertificateReadModel } from '../certificates/certificate-read-model.repository';
import { CertificateRepository } from '../certificates/certificate.repository';
import { certificatesProjection } from '../certificates/certificate.projection';
import { CertificateAuthority } from '../issue-certificate/certificate-authority';
import { IssueCertificateController } from '../issue-certificate/issue-certificate.controller';
import { IssueCertificateHandler, NOTARY_CLOCK } from '../issue-certificate/issue-certificate.handler';
import { SigningKeyStore } from '../signing-keys/signing-key.store';
import { SigningKeysModule } from '../signing-keys/signing-keys.module';
import { signingKeysProjection } from '../signing-keys/signing-key.projection';
import { RotateSigningKeyHandler } from '../rotate-signing-key/rotate-signing-key.handler';
import { RevokeSigningKeyHandler } from '../revoke-signing-key/revoke-signing-key.handler';
import { ImportLegacyCertificatesHandler } from '../import-legacy-certificates/import-legacy-certificates.handler';
import { CreditsService } from '../credits/credits.service';
import { CreditsRepository, CreditTotals } from '../credits/credits.repository';
import { CheckoutCreditsController } from '../checkout-credits/checkout-credits.controller';
import { CheckoutCreditsHandler } from '../checkout-credits/checkout-credits.handler';
import { creditCheckoutsProjection } from '../credits/credit-checkouts.projection';
import { CreditCheckouts, SqlCreditCheckouts } from '../credits/credit-checkouts.repository';
import { ReconcileCreditCheckoutsCommand, RECONCILE_INTERVAL_MS } from '../reconcile-credit-checkouts/reconcile-credit-checkouts.command';
import { ReconcileCreditCheckoutsHandler } from '../reconcile-credit-checkouts/reconcile-credit-checkouts.handler';
import type { Logger } from '@app/http';
import { SandboxLedger, SandboxSettlementProvider, SettlementProvider } from '@app/settlement';
import { NotaryController, SigningKeysController } from './notary.controllers';
import { VerifyPageController } from './verify-page.controller';
import { SdkAssetsController } from './sdk-assets.controller';
import { SdkBundle } from './sdk-bundle';
import { ProjectionHost } from '@app/event-store';
import { RegistryController } from '../registry/registry.controller';
import { registryProjection } from '../registry/registry.projection';
import { RegistryService } from '../registry/registry.service';
import { RegistryReadModel } from '../registry/registry-read-model.repository';
import { RegistryEntryRepository } from '../registry/registry-entry.repository';
import { RegisterRegistryEntryController } from '../register-registry-entry/register-registry-entry.controller';
import { RegisterRegistryEntryHandler } from '../register-registry-entry/register-registry-entry.handler';
import { EditRegistryEntryController } from '../edit-registry-entry/edit-registry-entry.controller';
import { EditRegistryEntryHandler } from '../edit-registry-entry/edit-registry-entry.handler';
import { GetBadgeController } from '../get-badge/get-badge.controller';
import { GetBadgeHandler } from '../get-badge/get-badge.handler';
import { GenerateSandboxDatasetController } from '../generate-sandbox-dataset/generate-sandbox-dataset.controller';
import { GenerateSandboxDatasetHandler } from '../generate-sandbox-dataset/generate-sandbox-dataset.handler';

/** The notary's inline read models, registered with the event store wherever it is opened. */
export const notaryProjections: InlineProjection[] = [certificatesProjection, signingKeysProjection, creditCheckoutsProjection];

/** The reconciliation of credits checkouts left without an outcome, on a timer in every process that takes checkouts. */
export class CreditCheckoutSweep extends PeriodicSweep {}

/** Certificate issuance, retrieval and verification, and the published signing keys. */
@Module({})
export class NotaryModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    projections: ProjectionHost,
    @Inject(CreditCheckoutSweep) private readonly checkoutSweep: CreditCheckoutSweep,
  ) {
    projections.register(registryProjection);
  }

  onApplicationBootstrap(): void {
    this.checkoutSweep.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.checkoutSweep.stop();
  }

  /** `settlementProvider`: the sandbox provider unless another is given (tests script failures). */
  static forRoot(config: AppConfig, options: { settlementProvider?: SettlementProvider } = {}): DynamicModule {
    return {
      module: NotaryModule,
      imports: [CqrsModule, IdempotencyModule.forRoot(), SigningKeysModule],
      controllers: [GenerateSandboxDatasetController, GetBadgeController, IssueCertificateController, RegisterRegistryEntryController, EditRegistryEntryController, NotaryController, SigningKeysController, CheckoutCreditsController, RegistryController, VerifyPageController, SdkAssetsController],
      providers: [
        // The SDK's browser bundle for the /verify page (libs/sdk/dist; `npm start` builds it).
        { provide: SdkBundle, useFactory: () => new SdkBundle(SdkBundle.locate()) },
        { provide: CertificateReadModel, useFactory: (db: SqlDatabase) => new CertificateReadModel(db), inject: [SqlDatabase] },
        { provide: CertificateRepository, useFactory: (store: EventStore) => new CertificateRepository(store), inject: [EventStore] },
        {
          provide: CertificateAuthority,
          useFactory: (keys: SigningKeyStore): CertificateAuthority => ({
            issuer: new URL(config.BASE_URL).host,
            sign: (message) => keys.current.sign(message),
            refresh: async () => void (await keys.refresh()),
          }),
          inject: [SigningKeyStore],
        },
        { provide: NOTARY_CLOCK, useValue: systemClock },
        // A class provider: the QueryBus finds a handler by its class.
        GetBadgeHandler,
        GenerateSandboxDatasetHandler,
        IssueCertificateHandler,
        RotateSigningKeyHandler,
        RevokeSigningKeyHandler,
        ImportLegacyCertificatesHandler,
        {
          provide: CertificateService,
          useFactory: (readModel: CertificateReadModel, keys: SigningKeyStore) => new CertificateService(readModel, keys),
          inject: [CertificateReadModel, SigningKeyStore],
        },
        {
          provide: SettlementProvider,
          useFactory: (db: SqlDatabase) => options.settlementProvider ?? new SandboxSettlementProvider(new SandboxLedger(db)),
          inject: [SqlDatabase],
        },
        { provide: CreditTotals, useExisting: CertificateReadModel },
        { provide: CreditsRepository, useFactory: (store: EventStore) => new CreditsRepository(store), inject: [EventStore] },
        CheckoutCreditsHandler,
        { provide: CreditCheckouts, useFactory: (db: SqlDatabase) => new SqlCreditCheckouts(db), inject: [SqlDatabase] },
        ReconcileCreditCheckoutsHandler,
        {
          provide: CreditCheckoutSweep,
          useFactory: (reconcile: ReconcileCreditCheckoutsHandler, logger: Logger) =>
            new CreditCheckoutSweep((limit) => reconcile.execute(new ReconcileCreditCheckoutsCommand(limit)), RECONCILE_INTERVAL_MS, logger, [], 'credits checkout reconciliation'),
          inject: [ReconcileCreditCheckoutsHandler, LOGGER],
        },
        {
          provide: CreditsService,
          useFactory: (totals: CreditTotals, store: EventStore, provider: SettlementProvider) => new CreditsService(totals, store, provider),
          inject: [CreditTotals, EventStore, SettlementProvider],
        },
        { provide: RegistryReadModel, useFactory: (db: SqlDatabase) => new RegistryReadModel(db), inject: [SqlDatabase] },
        { provide: RegistryService, useFactory: (readModel: RegistryReadModel) => new RegistryService(readModel, config.BASE_URL), inject: [RegistryReadModel] },
        { provide: RegistryEntryRepository, useFactory: (store: EventStore) => new RegistryEntryRepository(store), inject: [EventStore] },
        RegisterRegistryEntryHandler,
        EditRegistryEntryHandler,
      ],
      exports: [CertificateService, CreditsService, RegistryService, CreditCheckoutSweep],
    };
  }
}
