import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signing (standard-webhooks.com). The signed content is
 * `${webhook-id}.${webhook-timestamp}.${body}`; `webhook-signature` lists space-separated
 * `v1,<base64 HMAC-SHA256 under each live endpoint secret>` and
 * `v1a,<base64 Ed25519 signature by the service's active signing key>`.
 */
export const SECRET_PREFIX = 'whsec_';

/** A new endpoint secret: `whsec_` + base64 of 32 random bytes (what Standard Webhooks libraries take). */
export const newEndpointSecret = (): string => SECRET_PREFIX + randomBytes(32).toString('base64');

export const secretKeyBytes = (secret: string): Buffer => Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');

export const signedContent = (webhookId: string, timestampSeconds: number, body: string): Buffer =>
  Buffer.from(`${webhookId}.${timestampSeconds}.${body}`, 'utf8');

export const hmacSignature = (secret: string, content: Buffer): string => `v1,${createHmac('sha256', secretKeyBytes(secret)).update(content).digest('base64')}`;

export interface WebhookSigner {
  /** Ed25519 with the service's active signing key. */
  sign(message: Uint8Array): { key_id: string; signature: Uint8Array };
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

export function signWebhook(webhookId: string, timestampSeconds: number, body: string, secrets: readonly string[], signer: WebhookSigner): SignedHeaders {
  const content = signedContent(webhookId, timestampSeconds, body);
  const v1 = secrets.map((s) => hmacSignature(s, content));
  const v1a = `v1a,${Buffer.from(signer.sign(content).signature).toString('base64')}`;
  return { 'webhook-id': webhookId, 'webhook-timestamp': String(timestampSeconds), 'webhook-signature': [...v1, v1a].join(' ') };
}
