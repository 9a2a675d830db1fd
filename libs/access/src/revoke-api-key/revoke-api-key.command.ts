/** Revoke an API key at once (`npm run cli -- keys:revoke`); `orgId` limits it to that organization's keys. */
export class RevokeApiKeyCommand {
  constructor(
    readonly keyId: string,
    readonly options: { orgId?: string; reason?: string | null; /** A key id (it may revoke only keys it holds all the scopes of), `user:<id>` or `operator`. */ revokedBy?: string | null } = {},
  ) {}
}
