import type { AppendResult, EventStore, NewEvent } from '@app/event-store';
import { foldOrganization, OrganizationState } from '../domain/organization.aggregate';
import { accessProjection, organizationStream } from './access.events';

/** Organizations through the EventStore port: loaded by folding their stream, saved at the revision they were loaded at. */
export class OrganizationRepository {
  constructor(private readonly store: EventStore) {
    store.registerProjection(accessProjection);
  }

  async load(orgId: string): Promise<OrganizationState | null> {
    return foldOrganization(await this.store.readStream(organizationStream(orgId)));
  }

  /**
   * `at`: the revision the decision was made on (a race loses with WrongExpectedVersion), or
   * 'stream_exists' for changes that do not depend on each other (two new keys).
   */
  save(orgId: string, events: NewEvent[], at: OrganizationState | null | 'stream_exists'): Promise<AppendResult> {
    const expectedRevision = at === 'stream_exists' ? at : at ? at.revision : 'no_stream';
    return this.store.append(organizationStream(orgId), events, { expectedRevision });
  }
}
