import { DynamicModule, Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { EventStore } from './event-store.port';
import { openEventStore, OpenEventStoreOptions } from './open-event-store';
import { SqlDatabase } from './sql/sql-database';
import { SqlEventStore } from './sql/sql-event-store';
import { ProjectionHost, PROJECTIONS_ENABLED } from './projections/projection-host';

const OPENED = Symbol('OPENED_EVENT_STORE');

/**
 * Provides the EventStore port (and the SqlDatabase read models use), picked from config.
 * Closed on application shutdown, after the HTTP server has finished its requests.
 */
@Global()
@Module({})
export class EventStoreModule implements OnApplicationShutdown {
  constructor(@Inject(OPENED) private readonly opened: { db: SqlDatabase; store: SqlEventStore }) {}

  static forRoot(options: OpenEventStoreOptions & { runProjections?: boolean }): DynamicModule {
    return {
      module: EventStoreModule,
      providers: [
        { provide: OPENED, useFactory: () => openEventStore(options) },
        { provide: SqlDatabase, useFactory: (o: { db: SqlDatabase }) => o.db, inject: [OPENED] },
        { provide: SqlEventStore, useFactory: (o: { store: SqlEventStore }) => o.store, inject: [OPENED] },
        { provide: EventStore, useExisting: SqlEventStore },
        { provide: PROJECTIONS_ENABLED, useValue: options.runProjections ?? true },
        ProjectionHost,
      ],
      exports: [SqlDatabase, SqlEventStore, EventStore, ProjectionHost, PROJECTIONS_ENABLED],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.opened.store.close();
    await this.opened.db.close();
  }
}
