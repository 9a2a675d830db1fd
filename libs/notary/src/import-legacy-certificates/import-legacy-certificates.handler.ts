import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { AppError, KEY_ENCRYPTION_KEY } from '@app/core';
import { canonicalJson, PublicSigningKey, sha256Hex } from '@app/crypto';
import { AppendsNotWritten, EventStore, StreamAppend } from '@app/event-store';
import { CertificateRepository } from '../certificates/certificate.repository';
import type { SignedManifest } from '../domain/certificate';
import { CERTIFICATE_IMPORTED, CertificateImportedData, certificateStream } from '../domain/certificate.aggregate';
import { derivedEventId } from '../domain/credits.aggregate';
import { planLegacyImport } from '../domain/legacy-certificate';
import { importVerifyOnlyKeys, keyRingOf } from '../domain/signing-key-ring.aggregate';
import { SigningKeyRepository } from '../signing-keys/signing-key.repository';
import { ImportLegacyCertificatesCommand, LegacyImportReport } from './import-legacy-certificates.command';

/**
 * Imports legacy certificates, all or nothing: the plan (every signature checked against the ring
 * under the key status rule, every id against the stored certificates) refuses the whole file
 * before anything is written. Then ONE appendMany writes the new verify-only keys (derived event
 * ids, at any revision of the ring: they depend on no other key) and one CertificateImported per
 * certificate on its own stream (`no_stream`, derived event ids: the same import written twice is
 * a replay), all or nothing: a certificate stream another import opened meanwhile writes none of
 * it, and the import decides again (the other import's certificates are then already imported, or
 * refused as a conflict with nothing written).
 */
@CommandHandler(ImportLegacyCertificatesCommand)
export class ImportLegacyCertificatesHandler implements ICommandHandler<ImportLegacyCertificatesCommand, LegacyImportReport> {
  constructor(
    private readonly keys: SigningKeyRepository,
    private readonly certificates: CertificateRepository,
    private readonly store: EventStore,
    @Inject(KEY_ENCRYPTION_KEY) private readonly kek: Buffer,
  ) {}

  async execute(cmd: ImportLegacyCertificatesCommand): Promise<LegacyImportReport> {
    const now = cmd.at ?? new Date();
    const ids = [...new Set(cmd.certificates.map((c) => c.manifest.payload.certification_id))];
    // What earlier attempts of this command wrote (a later attempt finds them stored).
    const written = new Set<string>();
    const registered = new Map<string, PublicSigningKey>();
    for (let attempt = 1; ; attempt++) {
      const ring = keyRingOf(await this.keys.load(), this.kek);
      const existing = await this.certificates.loadMany(ids);
      const plan = planLegacyImport(ring, cmd.certificates, (id) => existing.get(id), cmd.orgId, now);
      if (plan.refused.length > 0) {
        const first = plan.refused[0];
        throw new AppError(
          'legacy_import_refused',
          `nothing was imported: ${plan.refused.length} certificate(s) refused; the first, at index ${first.index} (${first.certificate_id}): ${first.reason}, ${first.message}`,
          422,
          { refused: plan.refused },
        );
      }
      const appends: StreamAppend[] = plan.toImport.map((manifest) => {
        const data: CertificateImportedData = { org_id: cmd.orgId, manifest: stripEnvelope(manifest) };
        const id = manifest.payload.certification_id;
        return { stream: certificateStream(id), events: [{ event_id: derivedEventId(`${CERTIFICATE_IMPORTED}:${id}:${sha256Hex(canonicalJson(data))}`), type: CERTIFICATE_IMPORTED, data }], expected: 'no_stream' };
      });
      if (plan.keysAdded.length > 0) appends.unshift(this.keys.importAppend(importVerifyOnlyKeys(plan.keysAdded)));
      // All or nothing: a certificate stream another import opened meanwhile writes none of this
      // plan (not the keys, not the other certificates), and the import decides again.
      let lost = false;
      try {
        const outcomes = appends.length > 0 ? await this.store.appendMany(appends, { allOrNothing: true }) : [];
        outcomes.forEach((o, i) => {
          const stream = appends[i].stream;
          if (stream.startsWith(certificateStream('')) && o.status === 'appended') written.add(stream.slice(certificateStream('').length));
        });
        for (const k of plan.keysAdded) registered.set(k.key_id, k);
        // Every process must know the new keys before it is asked to verify with them.
        if (plan.keysAdded.length > 0) await this.keys.announce();
      } catch (err) {
        if (!(err instanceof AppendsNotWritten)) throw err;
        lost = true;
      }
      if (lost && attempt < 5) continue;
      if (lost) throw new Error('legacy import: certificate streams kept changing under the import');

      const keyOf = (id: string) => existing.get(id)?.manifest.signature.key_id ?? cmd.certificates.find((c) => c.manifest.payload.certification_id === id)!.manifest.signature.key_id;
      const imported = [...plan.toImport.map((m) => m.payload.certification_id).filter((id) => written.has(id)), ...plan.alreadyImported.filter((id) => written.has(id))];
      const already = [...plan.toImport.map((m) => m.payload.certification_id), ...plan.alreadyImported].filter((id) => !written.has(id));
      return {
        org_id: cmd.orgId,
        imported: imported.length,
        already_imported: already.length,
        keys_registered: [...registered.values()],
        certificates: [
          ...imported.map((id) => ({ certificate_id: id, key_id: keyOf(id), status: 'imported' as const })),
          ...already.map((id) => ({ certificate_id: id, key_id: keyOf(id), status: 'already_imported' as const })),
        ],
      };
    }
  }
}

/** Exactly the legacy manifest's three parts, nothing the file may have added around them. */
const stripEnvelope = (m: SignedManifest): SignedManifest => ({
  schema_version: m.schema_version,
  payload: m.payload,
  signature: { alg: 'Ed25519', key_id: m.signature.key_id, value: m.signature.value },
});
