import { DynamicModule, Module } from '@nestjs/common';
import type { AppConfig } from '@app/core';
import { SqlDatabase, SqlEventStore } from '@app/event-store';
import { PoliciesController } from './policies/policies.controller';
import { PolicyService } from './policies/policy.service';
import { NoSpendLedger, SPEND_LEDGER, SpendLedger } from './policies/spend-ledger';

/** Agent commerce: policies (and, as they land, authorization, approvals, settlement, receipts). */
@Module({})
export class CommerceModule {
  static forRoot(_config: AppConfig): DynamicModule {
    return {
      module: CommerceModule,
      controllers: [PoliciesController],
      providers: [
        { provide: SPEND_LEDGER, useClass: NoSpendLedger },
        {
          provide: PolicyService,
          useFactory: (db: SqlDatabase, store: SqlEventStore, ledger: SpendLedger) => new PolicyService(db, store, ledger),
          inject: [SqlDatabase, SqlEventStore, SPEND_LEDGER],
        },
      ],
      exports: [PolicyService, SPEND_LEDGER],
    };
  }
}
