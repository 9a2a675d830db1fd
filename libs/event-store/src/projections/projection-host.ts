import { Inject, Injectable, OnApplicationBootstrap, BeforeApplicationShutdown, Optional } from '@nestjs/common';
import { SqlDatabase } from '../sql/sql-database';
import { SqlEventStore } from '../sql/sql-event-store';
import { Projection, ProjectionRunner } from './projection-runner';

/** Capability libs provide their read-model projections under this token (a multi-provider array). */
export const PROJECTIONS = Symbol('PROJECTIONS');
export const PROJECTIONS_ENABLED = Symbol('PROJECTIONS_ENABLED');

/**
 * Runs every registered projection while the process is up (the worker role), and stops them
 * before the store closes. Several processes may run the same projections: the runner's
 * checkpoint lock keeps each event applied once.
 */
@Injectable()
export class ProjectionHost implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly runners: ProjectionRunner[] = [];

  constructor(
    private readonly db: SqlDatabase,
    private readonly store: SqlEventStore,
    @Optional() @Inject(PROJECTIONS) private readonly projections: Projection[] | null,
    @Optional() @Inject(PROJECTIONS_ENABLED) private readonly enabled: boolean | null,
  ) {}

  get names(): string[] {
    return (this.projections ?? []).map((p) => p.name);
  }

  onApplicationBootstrap(): void {
    if (this.enabled === false) return;
    for (const projection of this.projections ?? []) {
      const runner = new ProjectionRunner(this.db, this.store, projection);
      this.runners.push(runner);
      runner.start();
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.runners.map((r) => r.stop()));
  }
}
