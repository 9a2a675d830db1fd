/** Delete an endpoint (DELETE …/endpoints/{id}); its pending deliveries are abandoned when attempted. */
export class DeleteEndpointCommand {
  constructor(
    readonly organizationId: string,
    readonly endpointId: string,
  ) {}
}
