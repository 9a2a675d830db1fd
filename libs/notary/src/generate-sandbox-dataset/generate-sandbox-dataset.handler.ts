import { Inject } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CreateOrganizationCommand } from '@app/access';
import { APP_CONFIG, AppConfig } from '@app/core';
import { syntheticDataset, SyntheticDataset } from '../domain/synthetic-dataset';
import type { SignedManifest } from '../domain/certificate';
import { IssueCertificateCommand } from '../issue-certificate/issue-certificate.command';
import { GenerateSandboxDatasetCommand } from './generate-sandbox-dataset.command';

export interface SandboxDataset {
  dataset: SyntheticDataset & { content_type: 'text/csv' };
  certificate: { certificate_id: string; dataset_hash: string; signing_key_id: string; signature: string; issued_at: string; verify_url: string };
  sandbox_organization_id: string;
}

/**
 * Try issuance and verification without an account: a fresh sandbox organization (as a sandbox
 * key makes) issues a certificate for a small synthetic dataset, through the same commands as
 * any organization; the visitor gets the dataset's bytes to hash and check against it.
 */
@CommandHandler(GenerateSandboxDatasetCommand)
export class GenerateSandboxDatasetHandler implements ICommandHandler<GenerateSandboxDatasetCommand, SandboxDataset> {
  constructor(
    private readonly commands: CommandBus,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'BASE_URL'>,
  ) {}

  async execute(cmd: GenerateSandboxDatasetCommand): Promise<SandboxDataset> {
    const dataset = syntheticDataset(cmd.seed);
    const org = await this.commands.execute<CreateOrganizationCommand, { org_id: string }>(new CreateOrganizationCommand(`sandbox dataset ${dataset.filename}`, 'sandbox'));
    const m = await this.commands.execute<IssueCertificateCommand, SignedManifest>(
      new IssueCertificateCommand(org.org_id, dataset.content, { filename: dataset.filename, artifact_type: 'dataset' }),
    );
    return {
      dataset: { ...dataset, content_type: 'text/csv' },
      certificate: {
        certificate_id: m.payload.certification_id,
        dataset_hash: m.payload.dataset_hash,
        signing_key_id: m.signature.key_id,
        signature: `ed25519:${m.signature.value}`,
        issued_at: m.payload.timestamp,
        verify_url: `${this.config.BASE_URL}/verify/${m.payload.certification_id}`,
      },
      sandbox_organization_id: org.org_id,
    };
  }
}
