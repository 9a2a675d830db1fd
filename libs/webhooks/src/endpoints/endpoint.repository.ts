import { DomainError } from '@app/core';
import { EventStore, NewEvent, ReadModelConstraintViolated } from '@app/event-store';
import { EndpointEvent, EndpointState, foldEndpoint, MAX_ENDPOINTS_PER_ORG } from '../domain/endpoint.aggregate';
import { endpointStream } from '../domain/event-types';
import { EndpointChanges } from './endpoint-changes.repository';
import { ENDPOINT_LIMIT_CONSTRAINT, endpointsProjection } from './endpoint.projection';

/**
 * Writes of endpoint streams through the EventStore port; the endpoints projection writes the
 * read model (and the live-endpoint count whose constraint is the per-organization limit) with
 * each append. Every committed change but a creation is announced (the caches drop the endpoint).
 */
export class EndpointRepository {
  constructor(
    private readonly store: EventStore,
    readonly changes: EndpointChanges = new EndpointChanges(),
  ) {
    store.registerProjection(endpointsProjection);
  }

  /** The endpoint as its stream says; null when it has none. */
  async load(id: string): Promise<EndpointState | null> {
    return foldEndpoint(await this.store.readStream(endpointStream(id)));
  }

  /** A new endpoint's first event; refused over the organization's limit. */
  async saveNew(id: string, events: EndpointEvent[]) {
    try {
      return await this.store.append(endpointStream(id), events as NewEvent[], { expectedRevision: 'no_stream' });
    } catch (err) {
      if (err instanceof ReadModelConstraintViolated && err.constraint === ENDPOINT_LIMIT_CONSTRAINT) {
        throw new DomainError('webhook_endpoint_limit', `An organization may have at most ${MAX_ENDPOINTS_PER_ORG} webhook endpoints`);
      }
      throw err;
    }
  }

  /** Events a decision made at the state's revision (a race loses with WrongExpectedVersion); announced once committed. */
  async save(state: Pick<EndpointState, 'id' | 'revision'>, events: EndpointEvent[]) {
    if (events.length === 0) return null;
    const result = await this.store.append(endpointStream(state.id), events as NewEvent[], { expectedRevision: state.revision });
    await this.changes.announce();
    return result;
  }
}

