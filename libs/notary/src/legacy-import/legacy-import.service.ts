import { AppError } from '@app/core';
import type { PublicSigningKey } from '@app/crypto';
import { SqlDatabase, SqlEventStore } from '@app/event-store';
import { CertificatePayload, SignedManifest } from '../domain/certificate';
import { ExistingCertificate, LegacyCertificate, planLegacyImport } from '../domain/legacy-certificate';
import { CertificateImportedData as CertificateImported, certificateStream } from '../domain/certificate.aggregate';
import { SigningKeyStore } from '../signing-keys/signing-key.store';

export interface LegacyImportReport {
  org_id: string;
  imported: number;
  already_imported: number;
  /** Legacy public keys newly registered as verify-only (`retired`) keys. */
  keys_registered: PublicSigningKey[];
  certificates: Array<{ certificate_id: string; key_id: string; status: 'imported' | 'already_imported' }>;
}

interface Row {
  certificate_id: string;
  org_id: string;
  imported: boolean;
  payload: CertificatePayload;
  signature: string;
  key_id: string;
  schema_version: string;
}

/**
 * Imports legacy `cert.v2` certificates into an organization, all or nothing, in one transaction
 * under the signing-keys lock: unknown legacy public keys become verify-only keys
 * (SigningKeyImported), each new certificate a CertificateImported event on its own stream.
 * Importing the same file again imports nothing new.
 */
export class LegacyImportService {
  constructor(
    private readonly db: SqlDatabase,
    private readonly store: SqlEventStore,
    private readonly keys: SigningKeyStore,
  ) {}

  async import(orgId: string, certificates: LegacyCertificate[], now = new Date()): Promise<LegacyImportReport> {
    const ids = [...new Set(certificates.map((c) => c.manifest.payload.certification_id))];
    const { report, keysAdded } = await this.db.transaction(async (tx) => {
      const ring = await this.keys.lockIn(tx);
      const rows = await tx.query<Row>(
        'SELECT certificate_id, org_id, imported, payload, signature, key_id, schema_version FROM certificates WHERE certificate_id = ANY($1::uuid[])',
        [ids],
      );
      const existing = new Map<string, ExistingCertificate>(
        rows.map((r) => [
          r.certificate_id,
          { org_id: r.org_id, imported: r.imported, manifest: { schema_version: r.schema_version, payload: r.payload, signature: { alg: 'Ed25519', key_id: r.key_id, value: r.signature } } },
        ]),
      );
      const plan = planLegacyImport(ring, certificates, (id) => existing.get(id), orgId, now);
      if (plan.refused.length > 0) {
        const first = plan.refused[0];
        throw new AppError(
          'legacy_import_refused',
          `nothing was imported: ${plan.refused.length} certificate(s) refused; the first, at index ${first.index} (${first.certificate_id}): ${first.reason}, ${first.message}`,
          422,
          { refused: plan.refused },
        );
      }
      await this.keys.recordImportedIn(tx, ring, plan.keysAdded);
      for (const manifest of plan.toImport) {
        const data: CertificateImported = { org_id: orgId, manifest: stripEnvelope(manifest) };
        // The certificates projection writes its row in the same statement.
        await this.store.appendIn(tx, certificateStream(manifest.payload.certification_id), [{ type: 'certificate.imported', data }], 'no_stream');
      }
      const report: LegacyImportReport = {
        org_id: orgId,
        imported: plan.toImport.length,
        already_imported: plan.alreadyImported.length,
        keys_registered: plan.keysAdded,
        certificates: [
          ...plan.toImport.map((m) => ({ certificate_id: m.payload.certification_id, key_id: m.signature.key_id, status: 'imported' as const })),
          ...plan.alreadyImported.map((id) => ({ certificate_id: id, key_id: existing.get(id)!.manifest.signature.key_id, status: 'already_imported' as const })),
        ],
      };
      return { report, keysAdded: plan.keysAdded };
    });
    // Every process must know the new keys before it is asked to verify with them.
    if (keysAdded.length > 0) await this.keys.announce();
    return report;
  }
}

/** Exactly the legacy manifest's three parts, nothing the file may have added around them. */
const stripEnvelope = (m: SignedManifest): SignedManifest => ({
  schema_version: m.schema_version,
  payload: m.payload,
  signature: { alg: 'Ed25519', key_id: m.signature.key_id, value: m.signature.value },
});
