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
  private readonly registered: Projection[] = [];
  private started = false;

  constructor(
    private readonly db: SqlDatabase,
    private readonly store: SqlEventStore,
    @Optional() @Inject(PROJECTIONS) private readonly projections: Projection[] | null,
    @Optional() @Inject(PROJECTIONS_ENABLED) private readonly enabled: boolean | null,
  ) {}

  get names(): string[] {
    return this.all().map((p) => p.name);
  }

  /** Capability modules register their projections while the app initializes. */
  register(projection: Projection): void {
    if (this.started) throw new Error(`projection ${projection.name} registered after start`);
    this.registered.push(projection);
  }

  private all(): Projection[] {
    return [...(this.projections ?? []), ...this.registered];
  }

  /** Runs every projection until it has caught up with what is visible now (tests, CLI). */
  async catchUp(): Promise<void> {
    for (const p of this.all()) await new ProjectionRunner(this.db, this.store, p).catchUp();
  }

  onApplicationBootstrap(): void {
    this.started = true;
    if (this.enabled === false) return;
    for (const projection of this.all()) {
      const runner = new ProjectionRunner(this.db, this.store, projection);
      this.runners.push(runner);
      runner.start();
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.runners.map((r) => r.stop()));
  }
}
