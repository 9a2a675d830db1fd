/** End a session: its holder signs out, or someone with users:manage revokes it (DELETE /api/sessions/{id}). */
export class RevokeSessionCommand {
  constructor(
    readonly sessionId: string,
    readonly options: { orgId?: string; reason: 'signed_out' | 'revoked'; by: string },
  ) {}
}
