import { ArgumentsHost, Catch, Controller, ExceptionFilter, Get, Inject, Param, Res, UseFilters } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { Throttle } from '@app/access';
import { AppError } from '@app/core';
import { toErrorResponse, ZodPipe } from '@app/http';
import { CertificateService } from '../certificates/certificate.service';
import { SdkBundle } from './sdk-bundle';
import { SigningKeyStore } from '../signing-keys/signing-key.store';
import { renderErrorPage, renderVerifyPage, VERIFY_PAGE_CSP } from './verify-page';

const idParams = z.object({ certId: z.uuid({ error: 'must be a certificate id (uuid)' }) });

function pageHeaders(reply: FastifyReply, cache: string): FastifyReply {
  return reply
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', VERIFY_PAGE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', cache);
}

/** Errors on the page's route answer as HTML pages (same status and headers as the JSON envelope). */
@Catch()
export class VerifyPageErrorFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const request = host.switchToHttp().getRequest<FastifyRequest<{ Params: { certId?: string } }>>();
    const { status, body, headers } = toErrorResponse(exception);
    if (status >= 500) request.log?.error({ err: exception }, 'request failed');
    if (reply.sent) return;
    const id = String(request.params?.certId ?? '').slice(0, 200);
    const [title, message] =
      status === 404
        ? ['Certificate not found', `No certificate has the id ${id}. Check the link, or ask whoever gave it to you.`]
        : status === 400 && body.error === 'validation_failed'
          ? ['Malformed certificate id', `"${id}" is not a certificate id: certificate ids are UUIDs, like 123e4567-e89b-42d3-a456-426614174000.`]
          : status === 429
            ? ['Too many requests', `Too many verifications from your address; try again in ${headers['retry-after'] ?? 'a few'} seconds.`]
            : [status >= 500 ? 'Something went wrong' : 'Request refused', body.message];
    pageHeaders(reply.status(status).headers(headers), 'no-store').send(renderErrorPage(status, body.error, title, message));
  }
}

/**
 * The public verification page, `verify_url` of every certificate. It shows the verdict of
 * GET /api/verify/{id} (the same service call), and checks a dropped file's hash in the browser.
 */
@ApiTags('certificates')
@Controller('verify')
@UseFilters(VerifyPageErrorFilter)
export class VerifyPageController {
  constructor(
    private readonly certificates: CertificateService,
    private readonly keys: SigningKeyStore,
    @Inject(SdkBundle) private readonly bundle: SdkBundle,
  ) {}

  @Get(':certId')
  @Throttle('certificate_fetch_window')
  @ApiProduces('text/html')
  @ApiOperation({ summary: 'Public verification page (HTML): the verdict, the signing key, the signed JSON, the signature checked again in the browser by the SDK, and an in-browser file hash check' })
  async page(@Param(new ZodPipe(idParams, 'params')) p: z.infer<typeof idParams>, @Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    const found = await this.certificates.verificationReport(p.certId);
    if (!found) throw new AppError('not_found', `certificate ${p.certId} not found`, 404);
    const key = this.keys.current.get(found.manifest.signature.key_id) ?? null;
    // The verdict follows the key's status, which can change (revocation): revalidate each time.
    pageHeaders(reply, 'no-cache');
    return renderVerifyPage({ ...found, key, keys: this.keys.current.list(), bundleUrl: this.bundle.url() });
  }
}
