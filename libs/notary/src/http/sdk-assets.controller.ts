import { Controller, Get, Inject, Query, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AppError } from '@app/core';
import { SdkBundle } from './sdk-bundle';

/**
 * GET /assets/sigil.browser.js: the SDK's browser bundle, for the /verify page (and anyone who
 * wants to check certificates in a page). Not part of the API, so not in the OpenAPI document.
 */
@ApiExcludeController()
@Controller('assets')
export class SdkAssetsController {
  constructor(@Inject(SdkBundle) private readonly bundle: SdkBundle) {}

  @Get('sigil.browser.js')
  browserBundle(@Query('v') v: unknown, @Res({ passthrough: true }) reply: FastifyReply): Buffer {
    const file = this.bundle.current();
    if (!file) throw new AppError('not_found', 'The SDK browser bundle is not built on this server (npm run build:sdk)', 404);
    // The page asks for ?v=<its version>: that address never changes content, so it is cached for good.
    const immutable = v === file.version;
    reply
      .header('content-type', 'text/javascript; charset=utf-8')
      .header('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'public, max-age=300')
      .header('etag', `"${file.version}"`)
      .header('x-content-type-options', 'nosniff');
    return file.body;
  }
}
