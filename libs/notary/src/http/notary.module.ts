import { DynamicModule, Inject, Module, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { AppConfig, KEY_ENCRYPTION_KEY } from '@app/core';
import { SqlDatabase, SqlEventStore } from '@app/event-store';
import { CertificateService } from '../certificates/certificate.service';
import { SigningKeyStore } from '../signing-keys/signing-key.store';
import { NotaryController, SigningKeysController } from './notary.controllers';

/** Certificate issuance, retrieval and verification, and the published signing keys. */
@Module({})
export class NotaryModule implements OnModuleInit, OnApplicationShutdown {
  constructor(@Inject(SigningKeyStore) private readonly keys: SigningKeyStore) {}

  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: NotaryModule,
      controllers: [NotaryController, SigningKeysController],
      providers: [
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
      ],
      exports: [CertificateService, SigningKeyStore],
    };
  }

  async onModuleInit(): Promise<void> {
    await this.keys.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.keys.stop();
  }
}
