import type { INestApplication } from '@nestjs/common';
import { SqlDatabase } from '@app/event-store';

/**
 * Leaves an Idempotency-Key as a process that died after its work committed, but before the key
 * stored the answer, leaves it: claimed, with no answer, its lease run out. Answers how many keys
 * it changed (1 when the key was there).
 */
export async function lapseIdempotencyClaim(app: INestApplication, key: string): Promise<number> {
  const rows = await app.get(SqlDatabase).query(
    `UPDATE idempotency_keys SET status = 'in_progress', claim_token = gen_random_uuid(), locked_until = now() - interval '1 second',
       response_status = NULL, response_body = NULL, response_headers = NULL WHERE key = $1 RETURNING key`,
    [key],
  );
  return rows.length;
}
