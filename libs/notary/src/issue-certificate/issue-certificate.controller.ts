import { Body, Controller, HttpCode, Inject, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';
import { AccessContext, Authenticated, Caller, Throttle } from '@app/access';
import { AppError, APP_CONFIG, AppConfig } from '@app/core';
import { apiInput, ApiJsonBody, ApiJsonResponse, ZodPipe } from '@app/http';
import type { SignedManifest } from '../domain/certificate';
import { IssueCertificateCommand } from './issue-certificate.command';

const issueBody = apiInput(
  'IssueCertificateRequest',
  z.object({
    content: z.string({ error: 'content must be a string' }),
    // Stored in the certificate's payload, so refused with U+0000 before any route runs (create-app), as every body is.
    type: z.string().max(64).optional(),
    filename: z.string().max(255).optional(),
    artifact_type: z.enum(['dataset', 'model', 'system', 'output']).optional(),
    visibility: z.enum(['public', 'private']).optional().describe('public: listed in the public registry at once (default private: listed once the owner publishes it)'),
  }),
);

@ApiTags('certificates')
@Controller()
export class IssueCertificateController {
  constructor(
    private readonly commands: CommandBus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post('api/notary/create')
  @HttpCode(200)
  @ApiBearerAuth()
  @Authenticated('certificates:write')
  @Throttle('notary_issue')
  @ApiOperation({ operationId: 'issueCertificate', summary: 'Issue a certificate for content (JSON is canonicalized with RFC 8785 before hashing)' })
  @ApiJsonBody('IssueCertificateRequest')
  @ApiJsonResponse(200, 'IssuanceResponse')
  async create(@Caller() caller: AccessContext, @Body() raw: unknown) {
    // content_required is the spec's own code for a missing content field.
    if (raw === null || typeof raw !== 'object' || !('content' in raw) || (raw as { content: unknown }).content === undefined) {
      throw new AppError('content_required', 'The body needs "content": the artifact as a string', 400);
    }
    const { content, ...options } = new ZodPipe(issueBody).transform(raw);
    const m = await this.commands.execute<IssueCertificateCommand, SignedManifest>(new IssueCertificateCommand(caller.principal!.orgId, content, options));
    return {
      certificate_id: m.payload.certification_id,
      certificate_type: 'GENESIS',
      schema_version: 'cert.v1',
      signature_alg: 'Ed25519',
      signing_key_id: m.signature.key_id,
      signature: `ed25519:${m.signature.value}`,
      issued_at: m.payload.timestamp,
      dataset_hash: m.payload.dataset_hash,
      verify_url: `${this.config.BASE_URL}/verify/${m.payload.certification_id}`,
    };
  }
}
