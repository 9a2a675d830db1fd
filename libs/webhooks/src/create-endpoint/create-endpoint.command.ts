/** Register an endpoint (POST /api/cdp/webhooks/endpoints); its signing secret is answered once. */
export class CreateEndpointCommand {
  constructor(
    readonly organizationId: string,
    readonly input: { url: string; event_types?: string[]; description?: string | null; enabled?: boolean },
    /** The idempotent request's name (IdempotentRequest.requestId), when it came with a key: the endpoint's id derives from it. */
    readonly requestId?: string,
  ) {}
}
