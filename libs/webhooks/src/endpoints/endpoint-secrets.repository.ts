import { randomBytes } from 'node:crypto';
import { decryptSecret, encryptSecret } from '@app/crypto';
import type { SqlDatabase } from '@app/event-store';

/** A secret that signs, and until when (epoch ms) if it was rotated out. */
export interface LiveSecret {
  secret: string;
  expiresAt: number | null;
}

export const newSecretId = () => `sec_${randomBytes(8).toString('hex')}`;

/**
 * Endpoint signing secrets, sealed (AES-256-GCM under the key-encryption key) in their own
 * table; they never enter an event (events name secret ids only). A new endpoint's secret is
 * stored before its creation is appended (an endpoint never exists without one); a rotation's
 * after the rotation is appended (a refused rotation changes no secret).
 */
export abstract class EndpointSecrets {
  abstract add(endpointId: string, secretId: string, secret: string, at: Date): Promise<void>;
  /** Forgets a secret whose endpoint was never created (its creation was refused). */
  abstract discard(endpointId: string, secretId: string): Promise<void>;
  /** The new secret, and every other still live expiring at `until` at the latest. */
  abstract rotate(endpointId: string, secretId: string, secret: string, at: Date, until: Date): Promise<void>;
  /** The secrets live at `at`, newest first. */
  abstract live(endpointId: string, at: Date): Promise<LiveSecret[]>;
}

const aad = (endpointId: string, secretId: string) => `webhook-endpoint-secret:${endpointId}:${secretId}`;

export class SqlEndpointSecrets extends EndpointSecrets {
  constructor(
    private readonly db: SqlDatabase,
    private readonly kek: Buffer,
  ) {
    super();
  }

  async add(endpointId: string, secretId: string, secret: string, at: Date): Promise<void> {
    await this.db.query('INSERT INTO webhook_endpoint_secrets (endpoint_id, secret_id, sealed, created_at) VALUES ($1, $2, $3, $4)', [
      endpointId,
      secretId,
      this.seal(endpointId, secretId, secret),
      at.toISOString(),
    ]);
  }

  async discard(endpointId: string, secretId: string): Promise<void> {
    await this.db.query('DELETE FROM webhook_endpoint_secrets WHERE endpoint_id = $1 AND secret_id = $2', [endpointId, secretId]);
  }

  async rotate(endpointId: string, secretId: string, secret: string, at: Date, until: Date): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.query(
        `UPDATE webhook_endpoint_secrets SET expires_at = $2::timestamptz WHERE endpoint_id = $1 AND (expires_at IS NULL OR expires_at > $2::timestamptz)`,
        [endpointId, until.toISOString()],
      );
      await tx.query('INSERT INTO webhook_endpoint_secrets (endpoint_id, secret_id, sealed, created_at) VALUES ($1, $2, $3, $4)', [
        endpointId,
        secretId,
        this.seal(endpointId, secretId, secret),
        at.toISOString(),
      ]);
    });
  }

  async live(endpointId: string, at: Date): Promise<LiveSecret[]> {
    const rows = await this.db.query<{ secret_id: string; sealed: string; expires_at: Date | string | null }>(
      `SELECT secret_id, sealed, expires_at FROM webhook_endpoint_secrets WHERE endpoint_id = $1 AND (expires_at IS NULL OR expires_at > $2)
       ORDER BY created_at DESC, secret_id`,
      [endpointId, at.toISOString()],
      { name: 'webhook_send_target_secrets' },
    );
    return rows.map((r) => ({
      secret: decryptSecret(this.kek, r.sealed, aad(endpointId, r.secret_id)).toString('utf8'),
      expiresAt: r.expires_at === null ? null : new Date(r.expires_at).getTime(),
    }));
  }

  private seal(endpointId: string, secretId: string, secret: string): string {
    return encryptSecret(this.kek, Buffer.from(secret, 'utf8'), aad(endpointId, secretId));
  }
}
