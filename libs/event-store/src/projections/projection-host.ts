import { Inject, Injectable, Logger, OnApplicationBootstrap, BeforeApplicationShutdown, Optional } from '@nestjs/common';
import { SqlDatabase } from '../sql/sql-database';
import { SqlEventStore } from '../sql/sql-event-store';
import { BOUNDARY_SQL } from '../sql/append-sql';
import { Projection, ProjectionApplyFailed, ProjectionRunner } from './projection-runner';

/** The most events `lag()` counts behind one checkpoint. */
export const LAG_CAP = 1_000_000;

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
  private readonly logger = new Logger('ProjectionHost');

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

  /**
   * How many events of `$all` each checkpointed reader (these projections, and any other keeping
   * a row in projection_checkpoints, such as the webhook fan-out) has still to read, whatever
   * their type: the shared table's view, the same from every process, counted up to LAG_CAP so a
   * scrape stays cheap. Inline projections commit with their append and never lag.
   */
  async lag(): Promise<{ name: string; behind: number }[]> {
    const rows = await this.db.query<{ name: string; behind: string | number }>(
      `SELECT c.name, (SELECT count(*) FROM (SELECT 1 FROM events e WHERE e.global_position >= c.position AND e.global_position < b.boundary LIMIT ${LAG_CAP}) x) AS behind
         FROM (SELECT name, position FROM projection_checkpoints UNION ALL SELECT n, 0 FROM unnest($1::text[]) AS n WHERE n NOT IN (SELECT name FROM projection_checkpoints)) c,
              (SELECT ${BOUNDARY_SQL} AS boundary) b
        ORDER BY c.name`,
      // A projection that has not run yet has read nothing.
      [this.names],
    );
    return rows.map((r) => ({ name: r.name, behind: Number(r.behind) }));
  }

  /** Runs every projection until it has caught up with what is visible now (tests, CLI). */
  async catchUp(): Promise<void> {
    for (const p of this.all()) await new ProjectionRunner(this.db, this.store, p).catchUp();
  }

  onApplicationBootstrap(): void {
    this.started = true;
    if (this.enabled === false) return;
    for (const projection of this.all()) {
      // A batch that fails (a poison event, the database down) is retried, never skipped; it is logged each time.
      const runner = new ProjectionRunner(this.db, this.store, projection, { onError: (err) => this.logger.error(projectionError(projection.name, err)) });
      this.runners.push(runner);
      runner.start();
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.runners.map((r) => r.stop()));
  }
}

const projectionError = (name: string, err: unknown): string =>
  err instanceof ProjectionApplyFailed ? err.message : `projection ${name}: batch failed, retrying: ${err instanceof Error ? err.message : String(err)}`;
