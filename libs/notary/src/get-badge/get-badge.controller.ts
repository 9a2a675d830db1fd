import { Controller, Get, Param, Res } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { Throttle } from '@app/access';
import { AppError } from '@app/core';
import { ApiJsonResponse, ApiPathParams, ZodPipe } from '@app/http';
import { badgeSvg } from '../domain/badge';
import type { BadgeView } from './get-badge.handler';
import { GetBadgeQuery } from './get-badge.query';

const UUID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';
const badgeParams = z.object({
  certificate_id: z.string().regex(new RegExp(`^${UUID}(\\.svg|\\.json)?$`), { error: 'must be a certificate id (uuid), optionally ending in .svg or .json' }),
});

@ApiTags('certificates')
@Controller('api/badge')
export class GetBadgeController {
  constructor(private readonly queries: QueryBus) {}

  /**
   * JSON by default (shields.io's endpoint format, plus the verdict); `<id>.svg` is the image a
   * README embeds. A certificate not found is a 404: the error envelope, or an image saying so.
   * The verdict follows the key's status, which can change: caches keep it five minutes.
   */
  @Get(':certificate_id')
  @Throttle('badge_window')
  @ApiOperation({ operationId: 'getBadge', summary: "A certificate's badge: JSON (shields.io endpoint format and the verdict), or an SVG image with the .svg suffix" })
  @ApiPathParams(badgeParams)
  @ApiProduces('application/json', 'image/svg+xml')
  @ApiJsonResponse(200, 'Badge')
  async badge(@Param(new ZodPipe(badgeParams, 'params')) p: z.infer<typeof badgeParams>, @Res({ passthrough: true }) reply: FastifyReply): Promise<BadgeView | string> {
    const svg = p.certificate_id.endsWith('.svg');
    const id = p.certificate_id.replace(/\.(svg|json)$/, '').toLowerCase();
    const view = await this.queries.execute<GetBadgeQuery, BadgeView>(new GetBadgeQuery(id));
    // JSON errors are the envelope, as everywhere; the image of a missing certificate says so itself.
    if (!svg && view.state === 'not_found') throw new AppError('not_found', `certificate ${id} not found`, 404);
    reply.status(view.state === 'not_found' ? 404 : 200).header('cache-control', 'public, max-age=300');
    if (!svg) return view;
    reply.header('content-type', 'image/svg+xml; charset=utf-8').header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'").header('x-content-type-options', 'nosniff');
    return badgeSvg(view);
  }
}
