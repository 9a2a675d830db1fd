import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { APP_CONFIG, AppConfig } from '@app/core';
import { CertificateService } from '../certificates/certificate.service';
import { Badge, badgeFor } from '../domain/badge';
import { GetBadgeQuery } from './get-badge.query';

export interface BadgeView extends Badge {
  /** shields.io's endpoint-badge format: `{schemaVersion, label, message, color}` is a badge it can draw. */
  schemaVersion: 1;
  certificate_id: string;
  verified: boolean;
  schema_version: string | null;
  issued_at: string | null;
  key_id: string | null;
  reason: string | null;
  verify_url: string;
}

/** The verdict of the certificate as every verification endpoint gives it (key status included), as a badge. */
@QueryHandler(GetBadgeQuery)
export class GetBadgeHandler implements IQueryHandler<GetBadgeQuery, BadgeView> {
  constructor(
    private readonly certificates: CertificateService,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'BASE_URL'>,
  ) {}

  async execute(q: GetBadgeQuery): Promise<BadgeView> {
    const r = await this.certificates.verify(q.certificateId);
    return {
      schemaVersion: 1,
      ...badgeFor(r),
      certificate_id: q.certificateId,
      verified: r.verified,
      schema_version: r.schema_version,
      issued_at: r.issued_at,
      key_id: r.key_id,
      reason: r.reason,
      verify_url: `${this.config.BASE_URL}/verify/${q.certificateId}`,
    };
  }
}
