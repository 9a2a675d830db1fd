export const IDEMPOTENT = 'idempotency:options';

export interface IdempotentOptions {
  /** true: a request without `Idempotency-Key` is 400 `idempotency_key_required`. */
  required?: boolean;
}
