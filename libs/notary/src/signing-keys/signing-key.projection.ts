import type { InlineProjection, RowChange } from '@app/event-store';
import {
  SIGNING_KEY_CREATED,
  SIGNING_KEY_EVENT_TYPES,
  SIGNING_KEY_IMPORTED,
  SIGNING_KEY_RETIRED,
  SIGNING_KEY_REVOKED,
  SIGNING_KEYS_STREAM,
  publicFactsOf,
  SigningKeyImportedData,
  SigningKeyRetiredData,
  SigningKeyRevokedData,
} from '../domain/signing-key-ring.aggregate';

/**
 * The public facts of the signing keys (`signing_keys`), written with each event of the
 * `signing-keys` stream. The sealed private keys are not a projection: they never enter an event
 * (SigningKeyRepository stores them beside the append).
 */
export const signingKeysProjection: InlineProjection = {
  name: 'notary_signing_keys',
  filter: { eventTypes: SIGNING_KEY_EVENT_TYPES, streamPrefix: SIGNING_KEYS_STREAM },
  tables: ['signing_keys'],
  apply(event): RowChange[] {
    if (event.stream_id !== SIGNING_KEYS_STREAM) return [];
    switch (event.type) {
      case SIGNING_KEY_CREATED:
      case SIGNING_KEY_IMPORTED: {
        const row = publicFactsOf(event.type, event.data as SigningKeyImportedData);
        return [{ op: 'insert', table: 'signing_keys', key: ['key_id'], row, onConflict: 'nothing' }];
      }
      case SIGNING_KEY_RETIRED: {
        const d = event.data as SigningKeyRetiredData;
        return [{ op: 'update', table: 'signing_keys', key: { key_id: d.key_id }, set: { status: 'retired', retired_at: d.retired_at } }];
      }
      case SIGNING_KEY_REVOKED: {
        const d = event.data as SigningKeyRevokedData;
        return [{ op: 'update', table: 'signing_keys', key: { key_id: d.key_id }, set: { status: 'revoked', revoked_at: d.revoked_at } }];
      }
      default:
        return [];
    }
  },
};
