import { DomainError } from './domain-error';

/** How many times one record (a certificate, a decision, a review, a receipt, an anchor) is signed when its key keeps being revoked before it commits. */
export const MAX_SIGNING_ATTEMPTS = 3;

/**
 * What was written carried a record signed with a key that was revoked before it could be
 * recorded (the signer's ring was out of date): nothing of the append was written (a group
 * commit's batch fails whole: one ring signed it). Sign it again with the key active now.
 */
export class SigningKeyRevoked extends Error {
  readonly code = 'signing_key_revoked';
  constructor() {
    super('the signing key was revoked before the record was recorded; sign it again');
    this.name = 'SigningKeyRevoked';
  }
}

/**
 * Runs `attempt` (which signs and saves) until it is not refused for a revoked key, reloading the
 * signing keys (`refresh`) after each refusal, at most MAX_SIGNING_ATTEMPTS times; the last
 * refusal is thrown as it is. Each run must sign anew: a refused one wrote nothing.
 */
export async function signedAgainOnRevocation<T>(refresh: () => Promise<void>, attempt: () => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof SigningKeyRevoked) || n >= MAX_SIGNING_ATTEMPTS) throw err;
      await refresh();
    }
  }
}

/**
 * signedAgainOnRevocation for a request's answer: when the keys never catch up, the caller gets
 * the retryable 409 concurrent_modification.
 */
export async function signedWithCurrentKey<T>(refresh: () => Promise<void>, attempt: () => Promise<T>, what: string): Promise<T> {
  try {
    return await signedAgainOnRevocation(refresh, attempt);
  } catch (err) {
    if (err instanceof SigningKeyRevoked) throw new DomainError('concurrent_modification', `The signing keys changed while the ${what} was being signed (its key was revoked); retry`, undefined, 1);
    throw err;
  }
}
