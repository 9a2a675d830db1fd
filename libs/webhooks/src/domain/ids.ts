import { createHash } from 'node:crypto';
import { prefixedIdFor } from '@app/core';

export const ENDPOINT_ID_RE = /^ep_[0-9a-f]{32}$/;
export const DELIVERY_ID_RE = /^dlv_[0-9a-f]{32}$/;

/** A new endpoint's id; a request with an Idempotency-Key names it from its requestId. */
export const newEndpointId = (requestId?: string): string => prefixedIdFor('ep', requestId);

const digest = (...parts: string[]) => createHash('sha256').update(parts.join('\n')).digest();

/**
 * One delivery per (event, endpoint), whoever computes it and however often: a replayed
 * fan-out finds the same id and schedules nothing new.
 */
export const deliveryIdFor = (eventId: string, endpointId: string): string => `dlv_${digest('delivery', eventId, endpointId).toString('hex').slice(0, 32)}`;

/** A uuid (version 8, RFC 9562) derived from a name, for event ids that must repeat on replay. */
export function uuidFromName(...parts: string[]): string {
  const b = digest('uuid', ...parts).subarray(0, 16);
  b[6] = (b[6] & 0x0f) | 0x80;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
