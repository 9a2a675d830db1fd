export const IDEMPOTENT = 'idempotency:options';

export interface IdempotentOptions {
  /** true: a request without `Idempotency-Key` is 400 `idempotency_key_required`. */
  required?: boolean;
  /**
   * true: the response kept for replays is stored sealed (AES-256-GCM under KEY_ENCRYPTION_KEY,
   * bound to the organization and key), for a response that holds a secret shown once (a new
   * webhook endpoint's `whsec_…`): secrets stay encrypted at rest in idempotency_keys too.
   */
  sealResponse?: boolean;
}
