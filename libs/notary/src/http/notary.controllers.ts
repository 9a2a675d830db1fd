import { Body, Controller, Get, Headers, HttpCode, Inject, Param, Post, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { Throttle } from '@app/access';
import { AppError, APP_CONFIG, AppConfig } from '@app/core';
import { canonicalJson, sha256Hex } from '@app/crypto';
import { apiInput, ApiJsonBody, ApiJsonResponse, ApiPathParams, ApiQueryParams, schemaRef, ZodPipe } from '@app/http';
import { certificateView, SignedManifest } from '../domain/certificate';
import { CertificateService } from '../certificates/certificate.service';
import { SigningKeyStore } from '../signing-keys/signing-key.store';
import './notary.openapi';

const idParams = z.object({ certId: z.uuid({ error: 'must be a certificate id (uuid)' }) });
// A string that is not a SHA-256 hash is not a malformed request here: the spec has hash
// verification report problems in its 200 result's `error` (invalid_hash, from the service).
// Missing fields, wrong types and a malformed cert_id are still 400.
const hashField = z.string({ error: 'must be a string' }).max(200, { error: 'is too long for a hash' });
// Both documented forms: {cert_id, sha256}, or {hash} alone (finds that artifact's certificates).
const verifyHashBody = apiInput(
  'VerifyHashRequest',
  z.union([z.object({ cert_id: z.uuid({ error: 'must be a certificate id (uuid)' }), sha256: hashField }), z.object({ hash: hashField })]),
);
const proofQuery = z.object({
  certificate_id: z.uuid({ error: 'must be a certificate id (uuid)' }),
  hash: z.string().regex(/^sha256:[0-9a-f]{64}$/, 'must be sha256:<64 lowercase hex>'),
});
const verifyBody = apiInput(
  'VerifyRequest',
  z.object({
    certificate_id: z.uuid({ error: 'must be a certificate id (uuid)' }),
    artifact_hash: z.string().max(100).optional(),
  }),
);

@ApiTags('certificates')
@Controller()
export class NotaryController {
  constructor(
    private readonly certificates: CertificateService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private async find(certId: string): Promise<SignedManifest> {
    const m = await this.certificates.manifest(certId);
    if (!m) throw new AppError('not_found', `certificate ${certId} not found`, 404);
    return m;
  }

  @Get('api/certificates/:certId')
  @Throttle('certificate_fetch_window')
  @ApiOperation({ operationId: 'getCertificate', summary: 'The certificate: its service.cert.v1 fields and signature' })
  @ApiPathParams(idParams)
  @ApiJsonResponse(200, 'Certificate')
  async certificate(@Param(new ZodPipe(idParams, 'params')) p: z.infer<typeof idParams>) {
    return certificateView(await this.find(p.certId));
  }

  @Get('api/certificates/:certId/signed-payload')
  @Throttle('certificate_fetch_window')
  @ApiOperation({ operationId: 'getSignedPayload', summary: 'The exact signed payload and its signature (SignedManifest), as plain JSON' })
  @ApiPathParams(idParams)
  @ApiJsonResponse(200, 'SignedManifest')
  async signedPayload(@Param(new ZodPipe(idParams, 'params')) p: z.infer<typeof idParams>) {
    return this.find(p.certId);
  }

  @Get('api/cert/:certId/manifest')
  @Throttle('certificate_fetch_window')
  @ApiOperation({ operationId: 'getManifest', summary: 'The signed certificate manifest (the same SignedManifest)' })
  @ApiPathParams(idParams)
  @ApiJsonResponse(200, 'SignedManifest')
  async manifest(@Param(new ZodPipe(idParams, 'params')) p: z.infer<typeof idParams>) {
    return this.find(p.certId);
  }

  @Get('api/certificates/:certId/download')
  @Throttle('certificate_fetch_window')
  @ApiOperation({ operationId: 'downloadCertificate', summary: 'The SignedManifest as an application/service.manifest+json attachment' })
  @ApiPathParams(idParams)
  @ApiProduces('application/service.manifest+json')
  @ApiResponse({ status: 200, description: 'Success (Content-Disposition: attachment)', schema: schemaRef('SignedManifest') })
  async download(@Param(new ZodPipe(idParams, 'params')) p: z.infer<typeof idParams>, @Res({ passthrough: true }) reply: FastifyReply) {
    const m = await this.find(p.certId);
    reply.header('content-type', 'application/service.manifest+json');
    reply.header('content-disposition', `attachment; filename="certificate-${p.certId}.json"`);
    return JSON.stringify(m);
  }

  @Post('api/verify')
  @HttpCode(200)
  @Throttle('public_verify_window')
  @ApiOperation({ operationId: 'verify', summary: 'Verify a certificate (and optionally an artifact hash against it)' })
  @ApiJsonBody('VerifyRequest')
  @ApiJsonResponse(200, 'VerificationResult')
  async verify(@Body(new ZodPipe(verifyBody)) body: z.infer<typeof verifyBody>) {
    return this.certificates.verify(body.certificate_id, body.artifact_hash);
  }

  @Post('api/verify/hash')
  @HttpCode(200)
  @Throttle('public_verify_window')
  @ApiOperation({ operationId: 'verifyHash', summary: 'Check an artifact hash: {cert_id, sha256} against one certificate, or {hash} to find its certificates' })
  @ApiJsonBody('VerifyHashRequest')
  @ApiJsonResponse(200, 'HashVerificationResult')
  async verifyHash(@Body(new ZodPipe(verifyHashBody)) body: z.infer<typeof verifyHashBody>) {
    return 'cert_id' in body ? this.certificates.verifyHash(body.cert_id, body.sha256) : this.certificates.verifyArtifactHash(body.hash);
  }

  /** One prediction's inclusion in a certified manifest; checkable offline against manifest_hash. */
  @Get('api/predictions/proof')
  @Throttle('public_verify_window')
  @ApiOperation({ operationId: 'getPredictionProof', summary: 'The RFC 6962 inclusion proof of a prediction hash in a certified manifest' })
  @ApiQueryParams(proofQuery)
  @ApiJsonResponse(200, 'PredictionProof')
  async predictionProof(@Query(new ZodPipe(proofQuery, 'query')) q: z.infer<typeof proofQuery>) {
    return this.certificates.predictionProof(q.certificate_id, q.hash);
  }

  /** Server-side recompute of the canonical bytes and signature check, saying which check failed. */
  @Get('api/verify/:certId')
  @Throttle('public_verify_window')
  @ApiOperation({ operationId: 'getVerificationReport', summary: 'Server-side recompute and signature check, saying which check failed' })
  @ApiPathParams(idParams)
  @ApiJsonResponse(200, 'VerificationReport')
  async verifyById(@Param(new ZodPipe(idParams, 'params')) p: z.infer<typeof idParams>) {
    const found = await this.certificates.verificationReport(p.certId);
    if (!found) throw new AppError('not_found', `certificate ${p.certId} not found`, 404);
    return found.report;
  }
}

@ApiTags('certificates')
@Controller('.well-known')
export class SigningKeysController {
  constructor(private readonly keys: SigningKeyStore) {}

  /** Every key with its status; cached by ETag. */
  @Get('signing-keys.json')
  @ApiOperation({ operationId: 'getSigningKeys', summary: 'Every signing key with its status (ETag; If-None-Match answers 304)' })
  @ApiJsonResponse(200, 'KeysDocument')
  keysDocument(@Headers('if-none-match') ifNoneMatch: string | undefined, @Res({ passthrough: true }) reply: FastifyReply) {
    const body = { keys: this.keys.current.list() };
    const etag = `"${sha256Hex(canonicalJson(body)).slice(0, 32)}"`;
    reply.header('etag', etag);
    reply.header('cache-control', 'public, max-age=60');
    if (ifNoneMatch && ifNoneMatch.split(',').map((t) => t.trim()).includes(etag)) {
      reply.status(304);
      return '';
    }
    return body;
  }
}
