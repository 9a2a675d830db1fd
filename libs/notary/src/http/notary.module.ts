import { DynamicModule, Inject, Module, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { AppConfig, KEY_ENCRYPTION_KEY } from '@app/core';
import { SqlDatabase, SqlEventStore } from '@app/event-store';
import { CertificateService } from '../certificates/certificate.service';
import { SigningKeyStore } from '../signing-keys/signing-key.store';
import { CreditsService } from '../credits/credits.service';
import { SandboxSettlementProvider, SettlementProvider } from '@app/settlement';
import { CreditsController, NotaryController, SigningKeysController } from './notary.controllers';
import { VerifyPageController } from './verify-page.controller';
import { SdkAssetsController } from './sdk-assets.controller';
import { SdkBundle } from './sdk-bundle';
import { ProjectionHost } from '@app/event-store';
import { RegistryController } from '../registry/registry.controller';
import { registryProjection } from '../registry/registry.projection';
import { RegistryService } from '../registry/registry.service';

/** Certificate issuance, retrieval and verification, and the published signing keys. */
@Module({})
export class NotaryModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(SigningKeyStore) private readonly keys: SigningKeyStore,
    projections: ProjectionHost,
  ) {
    projections.register(registryProjection);
  }

  /** `settlementProvider`: the sandbox provider unless another is given (tests script failures). */
  static forRoot(config: AppConfig, options: { settlementProvider?: SettlementProvider } = {}): DynamicModule {
    return {
      module: NotaryModule,
      // Global: commerce signs receipts and webhooks sign deliveries with the same signing keys.
      global: true,
      controllers: [NotaryController, SigningKeysController, CreditsController, RegistryController, VerifyPageController, SdkAssetsController],
      providers: [
        // The SDK's browser bundle for the /verify page (libs/sdk/dist; `npm start` builds it).
        { provide: SdkBundle, useFactory: () => new SdkBundle(SdkBundle.locate()) },
        {
          provide: SigningKeyStore,
          useFactory: (db: SqlDatabase, store: SqlEventStore, kek: Buffer) => new SigningKeyStore(db, store, kek),
          inject: [SqlDatabase, SqlEventStore, KEY_ENCRYPTION_KEY],
        },
        {
          provide: CertificateService,
          useFactory: (db: SqlDatabase, store: SqlEventStore, keys: SigningKeyStore) => new CertificateService(db, store, keys, new URL(config.BASE_URL).host),
          inject: [SqlDatabase, SqlEventStore, SigningKeyStore],
        },
        {
          provide: SettlementProvider,
          useFactory: (db: SqlDatabase) => options.settlementProvider ?? new SandboxSettlementProvider(db),
          inject: [SqlDatabase],
        },
        {
          provide: CreditsService,
          useFactory: (db: SqlDatabase, store: SqlEventStore, provider: SettlementProvider) => new CreditsService(db, store, provider),
          inject: [SqlDatabase, SqlEventStore, SettlementProvider],
        },
        {
          provide: RegistryService,
          useFactory: (db: SqlDatabase, store: SqlEventStore) => new RegistryService(db, store, config.BASE_URL),
          inject: [SqlDatabase, SqlEventStore],
        },
      ],
      exports: [CertificateService, SigningKeyStore, CreditsService, RegistryService],
    };
  }

  async onModuleInit(): Promise<void> {
    await this.keys.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.keys.stop();
  }
}
