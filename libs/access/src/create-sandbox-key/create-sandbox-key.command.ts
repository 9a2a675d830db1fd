/** An ephemeral cdp_test_ key with every scope, for a fresh sandbox organization (POST /api/sandbox/keys). */
export class CreateSandboxKeyCommand {
  constructor(readonly now: Date = new Date()) {}
}

export const SANDBOX_KEY_TTL_MS = 24 * 3600 * 1000;
