import type { IssueCertificate } from '../domain/certificate.aggregate';

/** Issue a certificate for an organization's content (POST /api/notary/create). */
export class IssueCertificateCommand {
  constructor(
    readonly orgId: string,
    readonly content: string,
    readonly options: Pick<IssueCertificate, 'type' | 'filename' | 'artifact_type' | 'visibility'> = {},
  ) {}
}
