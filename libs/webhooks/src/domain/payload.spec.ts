import type { RecordedEvent } from '@app/event-store';
import { parseActor, webhookBody } from './payload';

describe('webhook body', () => {
  const event: RecordedEvent = {
    event_id: '0b8f4a8e-3a56-4c3f-9a3e-2f7f3c1d2e10',
    stream_id: 'transaction-txn_0123456789abcdef0123456789abcdef',
    revision: 2,
    global_position: 99,
    type: 'authorization.escalated',
    data: {
      transaction_id: 'txn_0123456789abcdef0123456789abcdef',
      authorization_id: 'auth_0123456789abcdef0123456789abcdef',
      organization_id: 'org_1',
      status: 'needs_review',
      decision: 'needs_review',
      reason_code: 'AMOUNT_ABOVE_REVIEW',
    },
    metadata: { actor: 'api_key:key_abc', correlation_id: 'txn_0123456789abcdef0123456789abcdef' },
    recorded_at: '2025-01-01T00:00:00.000Z',
    hash: 'sha256:00',
    prev_hash: null,
  };

  it('carries the contract fields, and the event data minus transaction, organization and status as metadata', () => {
    expect(webhookBody(event)).toEqual({
      id: event.event_id,
      event_type: 'authorization.escalated',
      transaction_id: 'txn_0123456789abcdef0123456789abcdef',
      timestamp: '2025-01-01T00:00:00.000Z',
      actor: { type: 'api_key', id: 'key_abc' },
      status: 'needs_review',
      sequence: 3,
      metadata: { authorization_id: 'auth_0123456789abcdef0123456789abcdef', decision: 'needs_review', reason_code: 'AMOUNT_ABOVE_REVIEW' },
    });
  });

  it('reads actors of every kind', () => {
    expect(parseActor('system:expiry-sweep')).toEqual({ type: 'system', id: 'expiry-sweep' });
    expect(parseActor('api_key:key_1:x')).toEqual({ type: 'api_key', id: 'key_1:x' });
    expect(parseActor('someone')).toEqual({ type: 'unknown', id: 'someone' });
    expect(parseActor(undefined)).toEqual({ type: 'unknown', id: null });
  });
});
