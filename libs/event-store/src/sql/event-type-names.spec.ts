import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEventStore, OpenedEventStore } from '../open-event-store';
import { RENAMED_EVENT_TYPES, renameEventTypesSql } from './event-type-names.migrations';

// The rename of stored event types (migration event_store_007): a stream recorded under the old
// names reads with the new ones and its hash chain still verifies; appends after it chain on.
describe('event type names (one style, stored streams renamed)', () => {
  let dir: string;
  let opened: OpenedEventStore;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sigil-names-'));
    opened = await openEventStore({ dataDir: dir });
  });

  afterEach(async () => {
    await opened.store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('every new name is <aggregate>.<what_happened> in lower snake case, and no two old names share one', () => {
    const names = Object.values(RENAMED_EVENT_TYPES);
    for (const name of names) expect(name).toMatch(/^[a-z][a-z_]*\.[a-z][a-z_]*$/);
    expect(new Set(names).size).toBe(names.length);
  });

  it('renames old types, keeps what was hashed, and the chain verifies before and after further appends', async () => {
    const { store, db } = opened;
    const stream = 'certificate-names-1';
    await store.append(stream, [
      { type: 'CertificateIssued', data: { n: 1 } },
      { type: 'SomethingKept', data: { n: 2 } },
    ]);
    const other = 'org-names-1';
    await store.append(other, [{ type: 'OrganizationCreated', data: { name: 'o' } }]);
    expect((await store.verifyStream(stream)).valid).toBe(true);

    await db.exec(renameEventTypesSql({ CertificateIssued: 'certificate.issued', OrganizationCreated: 'organization.created' }));

    const events = await store.readStream(stream);
    expect(events.map((e) => [e.type, e.hashed_type])).toEqual([
      ['certificate.issued', 'CertificateIssued'],
      ['SomethingKept', undefined],
    ]);
    expect(await store.verifyStream(stream)).toMatchObject({ valid: true, events: 2 });
    expect(await store.verifyStream(other)).toMatchObject({ valid: true, events: 1 });
    const page = await store.readAll({ filter: { eventTypes: ['organization.created'] } });
    expect(page.events.map((e) => e.stream_id)).toContain(other);

    // Appending under the new name continues the chain from the renamed event's hash.
    await store.append(stream, [{ type: 'certificate.issued', data: { n: 3 } }], { expectedRevision: 1 });
    expect(await store.verifyStream(stream)).toMatchObject({ valid: true, events: 3 });

    // Running the rename again changes nothing: the first old name stays the hashed one.
    await db.exec(renameEventTypesSql({ 'certificate.issued': 'certificate.issued' }));
    expect(await store.verifyStream(stream)).toMatchObject({ valid: true, events: 3 });
  });

  it('a renamed event whose data was edited afterwards still fails verification', async () => {
    const { store, db } = opened;
    const stream = 'certificate-names-2';
    await store.append(stream, [{ type: 'CertificateIssued', data: { amount: 1 } }]);
    await db.exec(renameEventTypesSql({ CertificateIssued: 'certificate.issued' }));
    await db.exec(`UPDATE events SET data = '{"amount":2}' WHERE stream_id = '${stream}'`);
    expect(await store.verifyStream(stream)).toMatchObject({ valid: false, reason: 'hash_mismatch', broken_at_revision: 0 });
  });

  it('changing the hashed name of a renamed event is caught too', async () => {
    const { store, db } = opened;
    const stream = 'certificate-names-3';
    await store.append(stream, [{ type: 'CertificateIssued', data: { amount: 1 } }]);
    await db.exec(renameEventTypesSql({ CertificateIssued: 'certificate.issued' }));
    await db.exec(`UPDATE events SET hashed_type = 'CertificateImported' WHERE stream_id = '${stream}'`);
    expect(await store.verifyStream(stream)).toMatchObject({ valid: false, reason: 'hash_mismatch' });
  });
});
