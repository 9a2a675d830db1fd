import { DomainError } from '@app/core';
import { InMemoryEventStore } from '@app/event-store';
import { certificateStream } from '../domain/certificate.aggregate';
import { registryStream } from '../domain/registry-entry.aggregate';
import { RegisterRegistryEntryCommand } from '../register-registry-entry/register-registry-entry.command';
import { RegisterRegistryEntryHandler } from '../register-registry-entry/register-registry-entry.handler';
import { RegistryEntryRepository } from '../registry/registry-entry.repository';
import { EditRegistryEntryCommand } from './edit-registry-entry.command';
import { EditRegistryEntryHandler } from './edit-registry-entry.handler';

const entry = { title: 'Rainfall 2025', summary: null, artifact_type: 'dataset' as const, industry: 'climate', tags: ['rain'], visibility: 'private' as const };

describe('register and edit registry entries (handlers on the in-memory store)', () => {
  let store: InMemoryEventStore;
  let register: RegisterRegistryEntryHandler;
  let sut: EditRegistryEntryHandler;
  beforeEach(() => {
    store = new InMemoryEventStore();
    const repo = new RegistryEntryRepository(store);
    register = new RegisterRegistryEntryHandler(repo);
    sut = new EditRegistryEntryHandler(repo);
  });

  it('registers an entry on its own stream, then its owner edits it there', async () => {
    const { id } = await register.execute(new RegisterRegistryEntryCommand('org_a', entry));
    await sut.execute(new EditRegistryEntryCommand('org_a', id, { visibility: 'public', summary: null }));
    const events = await store.readStream(registryStream(id));
    expect(events.map((e) => [e.type, e.data])).toEqual([
      ['registry_entry.registered', { entry_id: id, org_id: 'org_a', ...entry }],
      ['registry_entry.edited', { entry_id: id, visibility: 'public', summary: null }],
    ]);
  });

  it("edits a certificate's listing on the certificate's stream", async () => {
    const id = '6f1c1a8e-7a51-4d0b-9d2c-1f4f5e0a2b3c';
    await store.append(certificateStream(id), [{ type: 'certificate.issued', data: { org_id: 'org_a', manifest: { payload: { certification_id: id } } } }]);
    await sut.execute(new EditRegistryEntryCommand('org_a', id, { title: 'Renamed' }));
    expect((await store.readStream(certificateStream(id))).map((e) => e.type)).toEqual(['certificate.issued', 'registry_entry.edited']);
  });

  it("answers not_found for another organization's entry and for a missing one, and records nothing", async () => {
    const { id } = await register.execute(new RegisterRegistryEntryCommand('org_a', entry));
    await expect(sut.execute(new EditRegistryEntryCommand('org_b', id, { title: 'mine now' }))).rejects.toEqual(expect.objectContaining({ code: 'not_found' }));
    await expect(sut.execute(new EditRegistryEntryCommand('org_a', 'c0ffee00-0000-4000-8000-000000000000', { title: 'x' }))).rejects.toBeInstanceOf(DomainError);
    expect(await store.readStream(registryStream(id))).toHaveLength(1);
  });
});
