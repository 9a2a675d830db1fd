import type { EndpointEdit } from '../domain/endpoint.aggregate';

/** Change an endpoint (PATCH …/endpoints/{id}); `enabled: true` re-enables a disabled one. */
export class UpdateEndpointCommand {
  constructor(
    readonly organizationId: string,
    readonly endpointId: string,
    readonly changes: EndpointEdit,
  ) {}
}
