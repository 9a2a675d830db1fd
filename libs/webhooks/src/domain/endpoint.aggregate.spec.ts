import { DomainError } from '@app/core';
import {
  assertEnabled,
  createEndpoint,
  deleteEndpoint,
  disableEndpoint,
  foldEndpoint,
  ownedEndpoint,
  rotateEndpointSecret,
  SECRET_OVERLAP_MS,
  updateEndpoint,
} from './endpoint.aggregate';
import { WEBHOOK_EVENT_TYPES, WebhookEvents } from './event-types';

const created = createEndpoint({ id: 'ep_1', orgId: 'org_a', url: 'https://example.com/hook', event_types: ['execution.succeeded', 'authorization.requested', 'authorization.requested'], secretId: 'sec_1' });

describe('WebhookEndpoint aggregate', () => {
  it('creates an endpoint subscribed to the given types in the spec order (all when none are given), enabled by default', () => {
    expect(created).toEqual([
      {
        type: WebhookEvents.endpointCreated,
        data: { endpoint_id: 'ep_1', organization_id: 'org_a', url: 'https://example.com/hook', event_types: ['authorization.requested', 'execution.succeeded'], description: null, enabled: true, secret_id: 'sec_1' },
      },
    ]);
    const all = createEndpoint({ id: 'ep_2', orgId: 'org_a', url: 'https://example.com', secretId: 's', enabled: false });
    expect(all[0].data).toMatchObject({ event_types: [...WEBHOOK_EVENT_TYPES], enabled: false });
  });

  it('folds its stream: updates, disabling, deletion, with the revision of the last event', () => {
    const s0 = foldEndpoint(created)!;
    expect(s0).toMatchObject({ id: 'ep_1', org_id: 'org_a', enabled: true, deleted: false, revision: 0 });
    const edits = updateEndpoint(s0, { url: 'https://example.org/x', description: 'ours', enabled: false });
    expect(edits[0].data).toEqual({ endpoint_id: 'ep_1', organization_id: 'org_a', url: 'https://example.org/x', description: 'ours', enabled: false });
    const s1 = foldEndpoint([...created, ...edits])!;
    expect(s1).toMatchObject({ url: 'https://example.org/x', description: 'ours', enabled: false, revision: 1 });
    const s2 = foldEndpoint([...created, ...edits, ...updateEndpoint(s1, { enabled: true, description: null })])!;
    expect(s2).toMatchObject({ enabled: true, description: null, url: 'https://example.org/x', revision: 2 });
    const s3 = foldEndpoint([...created, ...deleteEndpoint(s0)])!;
    expect(s3).toMatchObject({ deleted: true, enabled: false, revision: 1 });
  });

  it("answers another organization's or a deleted endpoint like a missing one", () => {
    const s = foldEndpoint(created)!;
    expect(ownedEndpoint(s, 'org_a', 'ep_1')).toBe(s);
    for (const [state, org] of [[null, 'org_a'], [s, 'org_b'], [{ ...s, deleted: true }, 'org_a']] as const) {
      expect(() => ownedEndpoint(state, org, 'ep_1')).toThrow(expect.objectContaining({ code: 'not_found', message: 'webhook endpoint ep_1 not found' }));
    }
  });

  it('rotates the secret: the previous ones expire after the overlap', () => {
    const now = new Date('2026-11-25T10:00:00Z');
    const r = rotateEndpointSecret(foldEndpoint(created)!, 'sec_2', now);
    expect(r.previousExpireAt.getTime()).toBe(now.getTime() + SECRET_OVERLAP_MS);
    expect(r.events[0]).toEqual({ type: WebhookEvents.endpointSecretRotated, data: { endpoint_id: 'ep_1', organization_id: 'org_a', secret_id: 'sec_2', previous_secrets_expire_at: '2026-11-26T10:00:00.000Z' } });
  });

  it('is disabled by its deliveries once: nothing when already disabled or deleted', () => {
    const s = foldEndpoint(created)!;
    expect(disableEndpoint(s, { reason: 'gone', delivery_id: 'dlv_1' })).toEqual([
      { type: WebhookEvents.endpointDisabled, data: { endpoint_id: 'ep_1', organization_id: 'org_a', reason: 'gone', delivery_id: 'dlv_1' } },
    ]);
    expect(disableEndpoint({ ...s, enabled: false }, { reason: 'failing' })).toEqual([]);
    expect(disableEndpoint({ ...s, deleted: true }, { reason: 'failing' })).toEqual([]);
    expect(disableEndpoint(null, { reason: 'failing' })).toEqual([]);
  });

  it('takes test pings and recoveries only when enabled', () => {
    const s = foldEndpoint(created)!;
    expect(() => assertEnabled(s, 'ep_1')).not.toThrow();
    const refusal = (() => {
      try {
        assertEnabled({ ...s, enabled: false }, 'ep_1');
      } catch (err) {
        return err;
      }
    })();
    expect(refusal).toBeInstanceOf(DomainError);
    expect(refusal).toMatchObject({ code: 'webhook_endpoint_disabled', message: 'Webhook endpoint ep_1 is disabled or deleted; enable it first' });
  });
});
