/** Register an endpoint (POST /api/cdp/webhooks/endpoints); its signing secret is answered once. */
export class CreateEndpointCommand {
  constructor(
    readonly organizationId: string,
    readonly input: { url: string; event_types?: string[]; description?: string | null; enabled?: boolean },
  ) {}
}
