import { DynamicModule, Module, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { CqrsModule } from '@nestjs/cqrs';
import type { FastifyInstance } from 'fastify';
import { TransactionQueries } from '@app/commerce';
import { RateLimitStore } from '@app/access';
import { APP_CONFIG, AppConfig, Clock, systemClock } from '@app/core';
import { IdempotencyModule } from '@app/idempotency';
import { SigningKeysModule } from '@app/notary';
import { EventStore, SqlDatabase } from '@app/event-store';
import { ConsoleCertificates } from '../certificates/console-certificates.repository';
import { ChangeUserRoleHandler } from '../change-user-role/change-user-role.handler';
import { DeactivateUserHandler } from '../deactivate-user/deactivate-user.handler';
import { InviteUserHandler } from '../invite-user/invite-user.handler';
import { IssueSignInLinkHandler } from '../issue-sign-in-link/issue-sign-in-link.handler';
import { ConsoleAuth } from '../people/console-auth';
import { CONSOLE_CLOCK } from '../people/console-clock';
import { ConsoleQueries } from '../people/console-queries';
import { ConsoleReadModel } from '../people/console-read-model.repository';
import { SessionRepository, SignInLinkRepository, UserRepository } from '../people/console.repositories';
import { RedeemSignInLinkHandler } from '../redeem-sign-in-link/redeem-sign-in-link.handler';
import { RevokeSessionHandler } from '../revoke-session/revoke-session.handler';
import { SetPasswordHandler } from '../set-password/set-password.handler';
import { SignInWithPasswordHandler } from '../sign-in-with-password/sign-in-with-password.handler';
import { ConsoleController } from './console.controller';
import { ConsoleReads } from './console-reads';
import { FirstOwner } from './first-owner';
import { registerConsoleFormParser } from './form-parser';
import { registerConsoleErrorPages } from './console-http';
import { PeopleController } from './people.controllers';
import { KeysConsoleController } from './keys.console.controller';
import { PeopleConsoleController } from './people.console.controller';
import { SignInThrottle } from './sign-in-throttle';
import { SignInController } from './sign-in.controller';
import { CertificatesConsoleController } from './certificates.console.controller';
import { PoliciesConsoleController } from './policies.console.controller';
import { WebhooksConsoleController } from './webhooks.console.controller';

/** The modules whose services the console's pages call: the very ones the app imports (one instance each). */
export interface ConsoleDependencies {
  /** AccessModule.forRoot(…): keys, the counter store the sign-in limits use. */
  access: DynamicModule;
  /** CommerceModule.forRoot(…): transactions and policies. */
  commerce: DynamicModule;
}

/** The console at /console (server-rendered pages) and the people API (/api/users, /api/sessions). */
@Module({})
export class ConsoleModule implements OnModuleInit {
  constructor(private readonly http: HttpAdapterHost) {}

  static forRoot(config: Pick<AppConfig, 'RATE_LIMITS'>, dependencies: ConsoleDependencies): DynamicModule {
    return {
      module: ConsoleModule,
      imports: [CqrsModule, dependencies.access, dependencies.commerce, SigningKeysModule, IdempotencyModule.forRoot()],
      controllers: [SignInController, ConsoleController, PeopleController, WebhooksConsoleController, PoliciesConsoleController, CertificatesConsoleController, KeysConsoleController, PeopleConsoleController],
      providers: [
        { provide: ConsoleQueries, useFactory: (db: SqlDatabase) => new ConsoleReadModel(db), inject: [SqlDatabase] },
        { provide: UserRepository, useFactory: (store: EventStore) => new UserRepository(store), inject: [EventStore] },
        { provide: SessionRepository, useFactory: (store: EventStore) => new SessionRepository(store), inject: [EventStore] },
        { provide: SignInLinkRepository, useFactory: (store: EventStore) => new SignInLinkRepository(store), inject: [EventStore] },
        { provide: CONSOLE_CLOCK, useValue: systemClock },
        { provide: ConsoleCertificates, useFactory: (db: SqlDatabase) => new ConsoleCertificates(db), inject: [SqlDatabase] },
        { provide: ConsoleAuth, useFactory: (reads: ConsoleQueries, clock: Clock, c: AppConfig) => new ConsoleAuth(reads, clock, c.BASE_URL), inject: [ConsoleQueries, CONSOLE_CLOCK, APP_CONFIG] },
        // The commerce module's own queries (the API's).
        { provide: ConsoleReads, useFactory: (transactions: TransactionQueries) => new ConsoleReads(transactions), inject: [TransactionQueries] },
        IssueSignInLinkHandler,
        InviteUserHandler,
        ChangeUserRoleHandler,
        DeactivateUserHandler,
        SetPasswordHandler,
        RedeemSignInLinkHandler,
        SignInWithPasswordHandler,
        RevokeSessionHandler,
        FirstOwner,
        // The API's counter store (the access module's).
        { provide: SignInThrottle, useFactory: (store: RateLimitStore) => new SignInThrottle(store, config.RATE_LIMITS !== 'off'), inject: [RateLimitStore] },
      ],
      exports: [ConsoleQueries],
    };
  }

  onModuleInit(): void {
    const server = this.http.httpAdapter.getInstance<FastifyInstance>();
    registerConsoleFormParser(server);
    registerConsoleErrorPages(server);
  }
}
