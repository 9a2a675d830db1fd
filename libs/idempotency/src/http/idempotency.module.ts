import { DynamicModule, Module } from '@nestjs/common';
import { SqlDatabase } from '@app/event-store';
import { Metrics } from '@app/metrics';
import { IdempotencyOptions, IdempotencyService } from '../idempotency.service';
import { IdempotencyKeyRepository } from '../idempotency.repository';
import { IdempotentCallPipe } from './idempotent-call';

/** Import it in a module whose controllers use @Idempotent(). Its table: `idempotencyMigrations`. */
@Module({})
export class IdempotencyModule {
  static forRoot(options: IdempotencyOptions = {}): DynamicModule {
    return {
      module: IdempotencyModule,
      providers: [
        {
          provide: IdempotencyService,
          useFactory: (db: SqlDatabase, metrics?: Metrics) => new IdempotencyService(new IdempotencyKeyRepository(db), options, metrics),
          inject: [SqlDatabase, { token: Metrics, optional: true }],
        },
        IdempotentCallPipe,
      ],
      exports: [IdempotencyService, IdempotentCallPipe],
    };
  }
}
