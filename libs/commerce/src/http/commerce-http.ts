import { ApiHeader } from '@nestjs/swagger';
import { z } from 'zod';
import type { AccessContext } from '@app/access';
import { AUTHORIZATION_ID_RE, TRANSACTION_ID_RE } from '../transactions/transaction.events';

/** What the commerce routes share: the actor a key acts as, path parameters, the Idempotency-Key header's docs. */
export const actorOf = (caller: AccessContext) => `api_key:${caller.principal!.keyId}`;
export const txParams = z.object({ id: z.string().regex(TRANSACTION_ID_RE, 'must be a transaction id: txn_ followed by 32 hex digits') });
export const authParams = z.object({ authorization_id: z.string().regex(AUTHORIZATION_ID_RE, 'must be an authorization id: auth_ followed by 32 hex digits') });
export const idempotencyHeader = ApiHeader({ name: 'Idempotency-Key', required: false, description: '1..255 printable ASCII characters; the same key and body from the same API key within 24 h replays the first response; the key sent by another API key of the organization is 422 idempotency_key_reused' });
