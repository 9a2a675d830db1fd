import type { InlineProjection, RowChange } from '@app/event-store';
import { increment } from '@app/event-store';
import { CERTIFICATE_IMPORTED, CERTIFICATE_ISSUED, CertificateIssuedData, FREE_ISSUANCES } from '../domain/certificate.aggregate';
import { notRevokedSigningKey } from '../signing-keys/signing-key-guard';

/** The CHECK constraint of notary_credits (migration notary_011) that the paywall is. */
export const ALLOWANCE_CONSTRAINT = 'notary_credits_allowance';

/** The guard that no certificate is issued under a revoked key (notRevokedSigningKey). */
export const SIGNING_KEY_GUARD = 'notary_signing_key_not_revoked';

/**
 * The certificates read model, written with each certificate's first event: the certificate row
 * (served and verified from there), a prediction manifest's hashes (for inclusion proofs), and the
 * organization's issuance counter, which may not pass its free quota plus purchased credits
 * (imported certificates never count; credits come from NotaryCreditsPurchased).
 */
export const NOTARY_CREDITS_PURCHASED = 'notary_credits.purchased';
export const CREDITS_STREAM_PREFIX = 'notary-credits-';
export const certificatesProjection: InlineProjection = {
  name: 'notary_certificates',
  filter: { eventTypes: [CERTIFICATE_ISSUED, CERTIFICATE_IMPORTED, NOTARY_CREDITS_PURCHASED] },
  tables: ['certificates', 'prediction_manifests', 'notary_credits'],
  checks: [{ name: ALLOWANCE_CONSTRAINT, table: 'notary_credits', holds: (row) => Number(row.issued) <= FREE_ISSUANCES + Number(row.purchased ?? 0) }],
  // Issued here only: an imported certificate was signed elsewhere, as it was.
  guards: [notRevokedSigningKey(SIGNING_KEY_GUARD, (event) => (event.type === CERTIFICATE_ISSUED ? (event.data as CertificateIssuedData).manifest.signature.key_id : null))],
  // Each change names both counters (adding 0 to the other), so a row opened by either is whole
  // in every adapter, with or without column defaults.
  apply(event): RowChange[] {
    if (event.type === NOTARY_CREDITS_PURCHASED) {
      // Credits bought raise the organization's allowance; the stream names the organization.
      const orgId = event.stream_id.slice(CREDITS_STREAM_PREFIX.length);
      const { credits } = event.data as { credits: number };
      return [{ op: 'insert', table: 'notary_credits', key: ['org_id'], row: { org_id: orgId, purchased: increment(credits), issued: increment(0) }, onConflict: { update: ['purchased', 'issued'] } }];
    }
    const { org_id, manifest, prediction_hashes } = event.data as CertificateIssuedData;
    const p = manifest.payload;
    const imported = event.type === CERTIFICATE_IMPORTED;
    const changes: RowChange[] = [
      {
        op: 'insert',
        table: 'certificates',
        key: ['certificate_id'],
        row: {
          certificate_id: p.certification_id,
          org_id,
          schema_version: p.schema_version,
          payload: p as never,
          signature: manifest.signature.value,
          key_id: manifest.signature.key_id,
          dataset_hash: p.dataset_hash,
          issued_at: p.timestamp,
          imported,
        },
      },
    ];
    if (prediction_hashes) {
      changes.push({ op: 'insert', table: 'prediction_manifests', key: ['certificate_id'], row: { certificate_id: p.certification_id, manifest_hash: (p.manifest_hash as string | undefined) ?? null, prediction_hashes } });
    }
    if (!imported) {
      changes.push({ op: 'insert', table: 'notary_credits', key: ['org_id'], row: { org_id, issued: increment(1), purchased: increment(0) }, onConflict: { update: ['issued', 'purchased'] } });
    }
    return changes;
  },
};
