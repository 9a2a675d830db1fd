/** Send a `webhook.test` ping through the normal delivery path (POST …/endpoints/{id}/test). */
export class TestEndpointCommand {
  constructor(
    readonly organizationId: string,
    readonly endpointId: string,
    readonly actor: string,
  ) {}
}
