/** Events of `webhook-endpoint-<id>` streams. Secrets never appear in them (only secret ids). */
export interface EndpointCreated {
  endpoint_id: string;
  organization_id: string;
  url: string;
  event_types: string[];
  description: string | null;
  enabled: boolean;
  secret_id: string;
}

export interface EndpointUpdated {
  endpoint_id: string;
  organization_id: string;
  url?: string;
  event_types?: string[];
  description?: string | null;
  enabled?: boolean;
}

export interface EndpointSecretRotated {
  endpoint_id: string;
  organization_id: string;
  secret_id: string;
  /** Until when the previous secrets keep signing beside the new one. */
  previous_secrets_expire_at: string;
}

export interface EndpointDisabled {
  endpoint_id: string;
  organization_id: string;
  reason: 'gone' | 'failing';
  /** The delivery whose answer (410) disabled it. */
  delivery_id?: string;
  /** Since when every attempt has failed. */
  failing_since?: string;
}

export interface EndpointDeleted {
  endpoint_id: string;
  organization_id: string;
}
