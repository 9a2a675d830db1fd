import { openTestStore } from '../../../../test/support/test-store';
import { registryMigrations } from './registry.migrations';
import { registryReadModel } from './registry.projection';

describe('registryReadModel (on the real store)', () => {
  let t: Awaited<ReturnType<typeof openTestStore>>;
  beforeEach(async () => {
    t = await openTestStore(registryMigrations, [registryReadModel]);
  });
  afterEach(() => t?.dispose());

  const registered = (entryId: string) => ({
    type: 'registry_entry.registered',
    data: { entry_id: entryId, org_id: 'org_first', title: 'Rainfall', summary: null, artifact_type: 'dataset', industry: null, tags: [], visibility: 'public' },
  });
  const imported = (certificateId: string) => ({
    type: 'certificate.imported',
    data: { org_id: 'org_importer', manifest: { schema_version: 'cert.v2', payload: { certification_id: certificateId, dataset_hash: 'ab'.repeat(32), filename: 'legacy.csv' }, signature: { alg: 'Ed25519', key_id: 'k', value: 'v' } } },
  });

  it('keeps an entry whose id an imported certificate names again (an insert keeps the row its key already has), and goes on', async () => {
    const id = '6f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f';
    const other = '7f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f';
    await t.store.append('registry-entry-1', [registered(id)]);
    await t.store.append(`certificate-${id}`, [imported(id)]);
    await t.store.append(`certificate-${other}`, [imported(other)]);
    const rows = await t.db.query<{ id: string; org_id: string; title: string }>('SELECT id, org_id, title FROM registry_entries ORDER BY id');
    expect(rows.map((r) => [r.id, r.org_id, r.title])).toEqual([
      [id, 'org_first', 'Rainfall'],
      [other, 'org_importer', 'legacy.csv'],
    ]);
  });
});
