import { DomainError, fixedClock } from '@app/core';
import { accessWorld } from '../keys/access-spec-fixtures';
import { CreateOrganizationCommand } from './create-organization.command';
import { CreateOrganizationHandler } from './create-organization.handler';

describe('CreateOrganizationHandler (aggregate + repository on the in-memory store)', () => {
  const clock = fixedClock('2026-11-25T10:00:00.000Z');

  it('opens the organization stream with OrganizationCreated and writes its row', async () => {
    const { store, organizations, reads } = accessWorld(() => clock.now());
    const org = await new CreateOrganizationHandler(organizations).execute(new CreateOrganizationCommand('  Acme  '));
    expect(org).toEqual({ org_id: expect.stringMatching(/^org_[0-9a-f]{24}$/), name: 'Acme', kind: 'standard', created_at: '2026-11-25T10:00:00.000Z' });
    expect((await store.readStream(`organization-${org.org_id}`)).map((e) => [e.type, e.data])).toEqual([['organization.created', { org_id: org.org_id, name: 'Acme', kind: 'standard' }]]);
    expect(await reads.organization(org.org_id)).toMatchObject({ org_id: org.org_id, name: 'Acme', kind: 'standard', created_at: '2026-11-25T10:00:00.000Z' });
  });

  it('keeps the kind asked for, and refuses an unnamed organization, recording nothing', async () => {
    const { store, organizations } = accessWorld();
    const sut = new CreateOrganizationHandler(organizations);
    expect(await sut.execute(new CreateOrganizationCommand('Demo', 'demo'))).toMatchObject({ kind: 'demo' });
    await expect(sut.execute(new CreateOrganizationCommand('   '))).rejects.toBeInstanceOf(DomainError);
    await expect(sut.execute(new CreateOrganizationCommand('   '))).rejects.toMatchObject({ code: 'validation_failed' });
    expect((await store.readAll()).events).toHaveLength(1);
  });
});
