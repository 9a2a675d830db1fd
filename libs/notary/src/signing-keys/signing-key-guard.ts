import { SigningKeyRevoked } from '@app/core';
import { ProjectedEvent, ReadModelConstraintViolated, RowGuard } from '@app/event-store';

/**
 * A projection's guard that nothing signed by a revoked key is recorded: the signing key's row in
 * the signing-keys read model (signingKeysProjection's `signing_keys`) is read as the append
 * commits, locked against the revocation's update of it, so a revocation either commits first and
 * refuses the append or waits for it. A process whose ring is out of date signs with a key another
 * process revoked meanwhile; its append is refused whole, to be signed again once it has reloaded.
 * A retired key still signs (the rotation's grace). `keyOf`: the key that signed the event's
 * record, or null when it carries none.
 */
export const notRevokedSigningKey = (name: string, keyOf: (event: ProjectedEvent) => string | null): RowGuard => ({
  name,
  table: 'signing_keys',
  column: 'key_id',
  keyOf,
  refusedWhen: { column: 'status', values: ['revoked'] },
  queue: SIGNING_KEY_QUEUE,
});

/**
 * The advisory-lock namespace of the signing keys' rows (RowGuard.queue): records signed with a key
 * queue behind a revocation that has asked for the key's row (SigningKeyRepository.decideHoldingKey),
 * so records that keep coming cannot keep it waiting. Any 32-bit integer not used elsewhere (the
 * migrations lock 7355608 in the one-argument space; this is the two-argument one).
 */
export const SIGNING_KEY_QUEUE = 0x51616b;

/** The refusal of the guard named `guard` as SigningKeyRevoked, for its writer to sign again; null for any other error. */
export const revokedKeyRefusal = (err: unknown, guard: string): SigningKeyRevoked | null =>
  err instanceof ReadModelConstraintViolated && err.constraint === guard ? new SigningKeyRevoked() : null;
