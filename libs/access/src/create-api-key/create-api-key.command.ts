import type { KeyMode } from '../domain/api-key';
import type { Scope } from '../domain/scopes';

/** A new API key for an existing organization (`npm run cli -- keys:create`). */
export class CreateApiKeyCommand {
  constructor(
    readonly orgId: string,
    readonly options: {
      scopes: Scope[];
      mode: KeyMode;
      name?: string | null;
      owner?: string | null;
      expiresAt?: Date | null;
      /** Who creates it: the creating key's id (its mode, scopes and expiry bound the new key), `user:<id>` or `operator`. */
      createdBy?: string | null;
    },
  ) {}
}

export interface CreatedApiKey {
  key_id: string;
  /** Shown once, at creation. */
  key: string;
  org_id: string;
  scopes: Scope[];
  mode: KeyMode;
  expires_at: string | null;
}
