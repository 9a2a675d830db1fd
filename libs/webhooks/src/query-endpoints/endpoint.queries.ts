import { DomainError } from '@app/core';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { EndpointRows, EndpointView, endpointView } from '../endpoints/endpoint-rows.repository';

/** The organization's endpoints (never a secret). */
export class ListEndpointsQuery {
  constructor(readonly organizationId: string) {}
}

/** One endpoint; another organization's answers like a missing one. */
export class GetEndpointQuery {
  constructor(
    readonly organizationId: string,
    readonly endpointId: string,
  ) {}
}

@QueryHandler(ListEndpointsQuery)
export class ListEndpointsHandler implements IQueryHandler<ListEndpointsQuery, { items: EndpointView[] }> {
  constructor(private readonly rows: EndpointRows) {}

  async execute(q: ListEndpointsQuery) {
    return { items: (await this.rows.list(q.organizationId)).map(endpointView) };
  }
}

@QueryHandler(GetEndpointQuery)
export class GetEndpointHandler implements IQueryHandler<GetEndpointQuery, EndpointView> {
  constructor(private readonly rows: EndpointRows) {}

  async execute(q: GetEndpointQuery) {
    const row = await this.rows.byId(q.endpointId);
    if (!row || row.org_id !== q.organizationId || row.deleted_at) throw new DomainError('not_found', `webhook endpoint ${q.endpointId} not found`);
    return endpointView(row);
  }
}
