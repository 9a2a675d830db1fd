/** A new signing secret (POST …/endpoints/{id}/rotate-secret); the previous ones keep signing beside it for 24 h. */
export class RotateEndpointSecretCommand {
  constructor(
    readonly organizationId: string,
    readonly endpointId: string,
  ) {}
}
