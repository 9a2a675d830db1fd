import type { SqlDatabase } from '@app/event-store';

/** Where the fan-out has read `$all` up to (a row of projection_checkpoints, under the fan-out's name). */
export class FanOutCheckpoint {
  constructor(
    private readonly db: SqlDatabase,
    readonly name = 'webhook-fan-out',
  ) {}

  async read(): Promise<number> {
    const [row] = await this.db.query<{ position: string | number }>('SELECT position FROM projection_checkpoints WHERE name = $1', [this.name]);
    return row ? Number(row.position) : 0;
  }

  /** Moves from `from` to `to`; false when another process moved it first. */
  async advance(from: number, to: number): Promise<boolean> {
    const rows = await this.db.query(
      `INSERT INTO projection_checkpoints (name, position) VALUES ($1, $2) ON CONFLICT (name)
       DO UPDATE SET position = EXCLUDED.position, updated_at = now() WHERE projection_checkpoints.position = $3 RETURNING name`,
      [this.name, to, from],
    );
    return rows.length > 0;
  }
}
