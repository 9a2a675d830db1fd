import { randomUUID } from 'node:crypto';
import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Clock, signedWithCurrentKey } from '@app/core';
import { issueCertificate } from '../domain/certificate.aggregate';
import type { SignedManifest } from '../domain/certificate';
import { CertificateRepository } from '../certificates/certificate.repository';
import { CertificateAuthority } from './certificate-authority';
import { IssueCertificateCommand } from './issue-certificate.command';

export const NOTARY_CLOCK = Symbol('NOTARY_CLOCK');

/**
 * A new certificate: nothing to load; the aggregate decides (hash, validate, sign); the
 * repository saves. A certificate whose signing key was revoked before it committed (this
 * process's keys were out of date) is never recorded: the authority reloads its keys and the
 * certificate is signed again with the active key, under the same id.
 */
@CommandHandler(IssueCertificateCommand)
export class IssueCertificateHandler implements ICommandHandler<IssueCertificateCommand, SignedManifest> {
  constructor(
    private readonly certificates: CertificateRepository,
    private readonly authority: CertificateAuthority,
    @Inject(NOTARY_CLOCK) private readonly clock: Clock,
  ) {}

  async execute(cmd: IssueCertificateCommand): Promise<SignedManifest> {
    const certificateId = randomUUID();
    return signedWithCurrentKey(
      () => this.authority.refresh(),
      async () => {
        const { events, manifest } = issueCertificate(null, { certificateId, orgId: cmd.orgId, content: cmd.content, ...cmd.options }, {
          now: this.clock.now(),
          issuer: this.authority.issuer,
          sign: (message) => this.authority.sign(message),
        });
        await this.certificates.saveNew({ certificateId, orgId: cmd.orgId, events });
        return manifest;
      },
      'certificate',
    );
  }
}
