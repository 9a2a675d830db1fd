import { endpointStream, WebhookEvents } from '../domain/event-types';
import { secretsAt } from '../endpoints/endpoint-cache';
import { webhooksWorld } from '../webhook-spec-fixtures';
import { RotateEndpointSecretCommand } from './rotate-endpoint-secret.command';
import { RotateEndpointSecretHandler } from './rotate-endpoint-secret.handler';

describe('RotateEndpointSecretHandler', () => {
  it('records the rotation, then signs with the new secret beside the previous one for 24 h', async () => {
    const w = webhooksWorld();
    const sut = new RotateEndpointSecretHandler(w.endpoints, w.secrets, w.clock);
    const ep = await w.createEndpoint('org_a');
    const rotated = await sut.execute(new RotateEndpointSecretCommand('org_a', ep.id));
    expect(rotated).toMatchObject({ id: ep.id, previous_secret_expires_at: '2026-11-26T10:00:00.000Z' });
    expect(rotated.secret).not.toBe(ep.secret);
    const events = await w.store.readStream(endpointStream(ep.id));
    expect(events[1]).toMatchObject({ type: WebhookEvents.endpointSecretRotated, data: { previous_secrets_expire_at: '2026-11-26T10:00:00.000Z' } });
    expect(JSON.stringify(events[1].data)).not.toContain(rotated.secret);
    const target = (await w.cache.get(ep.id))!;
    expect(secretsAt(target, new Date('2026-11-25T12:00:00Z'))).toEqual([rotated.secret, ep.secret]);
    expect(secretsAt(target, new Date('2026-11-26T10:00:01Z'))).toEqual([rotated.secret]);
  });

  it("refuses another organization's endpoint and changes no secret", async () => {
    const w = webhooksWorld();
    const ep = await w.createEndpoint('org_a');
    await expect(new RotateEndpointSecretHandler(w.endpoints, w.secrets, w.clock).execute(new RotateEndpointSecretCommand('org_b', ep.id))).rejects.toMatchObject({ code: 'not_found' });
    expect(w.secrets.secrets).toHaveLength(1);
  });
});
