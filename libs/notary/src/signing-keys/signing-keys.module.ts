import { Inject, Module, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { KEY_ENCRYPTION_KEY } from '@app/core';
import { EventStore, SqlDatabase } from '@app/event-store';
import { SigningKeyRepository } from './signing-key.repository';
import { SigningKeyStore } from './signing-key.store';

/**
 * The service's signing keys, one ring per process: certificates, receipts and decision records,
 * and webhook v1a signatures all sign with it. Imported by every module that signs or verifies
 * (the ring follows rotations made by any process).
 */
@Module({
  providers: [
    { provide: SigningKeyRepository, useFactory: (db: SqlDatabase, store: EventStore) => SigningKeyRepository.on(db, store), inject: [SqlDatabase, EventStore] },
    { provide: SigningKeyStore, useFactory: (keys: SigningKeyRepository, kek: Buffer) => new SigningKeyStore(keys, kek), inject: [SigningKeyRepository, KEY_ENCRYPTION_KEY] },
  ],
  exports: [SigningKeyRepository, SigningKeyStore],
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
