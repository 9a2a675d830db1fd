import { Inject, Module, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { KEY_ENCRYPTION_KEY } from '@app/core';
import { SqlDatabase, SqlEventStore } from '@app/event-store';
import { SigningKeyStore } from './signing-key.store';

/**
 * The service's signing keys, one ring per process: certificates, receipts and decision records,
 * and webhook v1a signatures all sign with it. Imported by every module that signs or verifies
 * (the ring follows rotations made by any process).
 */
@Module({
  providers: [
    {
      provide: SigningKeyStore,
      useFactory: (db: SqlDatabase, store: SqlEventStore, kek: Buffer) => new SigningKeyStore(db, store, kek),
      inject: [SqlDatabase, SqlEventStore, KEY_ENCRYPTION_KEY],
    },
  ],
  exports: [SigningKeyStore],
})
export class SigningKeysModule implements OnModuleInit, OnApplicationShutdown {
  constructor(@Inject(SigningKeyStore) private readonly keys: SigningKeyStore) {}

  async onModuleInit(): Promise<void> {
    await this.keys.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.keys.stop();
  }
}
