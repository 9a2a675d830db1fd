import { InMemoryEventStore } from '@app/event-store';
import { AccessQueries, KeyRow, OrganizationRow } from './access-queries';
import { OrganizationRepository } from './organization.repository';

/** Specs: the access read model as the in-memory store's projection keeps it. */
export class InMemoryAccessQueries extends AccessQueries {
  constructor(private readonly store: InMemoryEventStore) {
    super();
  }
  private keys = () => this.store.rows('api_keys') as unknown as KeyRow[];
  async keyRow(keyId: string) {
    return this.keys().find((k) => k.key_id === keyId);
  }
  async organization(orgId: string) {
    return (this.store.rows('organizations') as unknown as OrganizationRow[]).find((o) => o.org_id === orgId) ?? null;
  }
  async countOrganizations() {
    return this.store.rows('organizations').length;
  }
  async keysOf(orgId: string) {
    return this.keys().filter((k) => k.org_id === orgId);
  }
  async key(keyId: string) {
    return (await this.keyRow(keyId)) ?? null;
  }
}

/** An in-memory store with the access projection, its repository and its read model. */
export function accessWorld(now: () => Date = () => new Date()) {
  const store = new InMemoryEventStore(now);
  const organizations = new OrganizationRepository(store);
  return { store, organizations, reads: new InMemoryAccessQueries(store) };
}
