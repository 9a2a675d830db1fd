import type { PublicSigningKey } from '@app/crypto';
import type { LegacyCertificate } from '../domain/legacy-certificate';

/** Import legacy cert.v2 certificates into an organization: `npm run cli -- certificates import-legacy <file> --org <org_id>`. */
export class ImportLegacyCertificatesCommand {
  constructor(
    readonly orgId: string,
    readonly certificates: LegacyCertificate[],
    readonly at?: Date,
  ) {}
}

export interface LegacyImportReport {
  org_id: string;
  imported: number;
  already_imported: number;
  /** Legacy public keys newly registered as verify-only (`retired`) keys. */
  keys_registered: PublicSigningKey[];
  certificates: Array<{ certificate_id: string; key_id: string; status: 'imported' | 'already_imported' }>;
}
