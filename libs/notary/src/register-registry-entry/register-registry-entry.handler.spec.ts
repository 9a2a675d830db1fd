import { InMemoryEventStore } from '@app/event-store';
import { registryStream } from '../domain/registry-entry.aggregate';
import { RegistryEntryRepository } from '../registry/registry-entry.repository';
import { RegisterRegistryEntryCommand } from './register-registry-entry.command';
import { RegisterRegistryEntryHandler } from './register-registry-entry.handler';

const entry = { title: 'Rainfall 2025', summary: 'daily totals', artifact_type: 'dataset' as const, industry: 'climate', tags: ['rain'], visibility: 'private' as const };

describe('RegisterRegistryEntryHandler (handler on the in-memory store)', () => {
  it('opens each entry as its own stream with one registry_entry.registered event naming its organization', async () => {
    const store = new InMemoryEventStore();
    const sut = new RegisterRegistryEntryHandler(new RegistryEntryRepository(store));
    const a = await sut.execute(new RegisterRegistryEntryCommand('org_a', entry));
    const b = await sut.execute(new RegisterRegistryEntryCommand('org_b', { ...entry, visibility: 'public' }));
    expect(a.id).not.toBe(b.id);
    expect((await store.readStream(registryStream(a.id))).map((e) => [e.type, e.revision, e.data])).toEqual([['registry_entry.registered', 0, { entry_id: a.id, org_id: 'org_a', ...entry }]]);
    expect((await store.readStream(registryStream(b.id)))[0].data).toMatchObject({ org_id: 'org_b', visibility: 'public' });
    expect((await store.readAll()).events).toHaveLength(2);
  });
});
