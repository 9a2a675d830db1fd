import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { AppError } from '@app/core';
import { ReadinessService } from '@app/platform';

@ApiTags('health')
@Controller()
export class HealthController {
  constructor(private readonly readiness: ReadinessService) {}

  /** Liveness: the process serves HTTP. Checks nothing else, so a slow database never restarts it. */
  @Get('healthz')
  @ApiOkResponse({ schema: { example: { ok: true, status: 'up' } } })
  healthz() {
    return { ok: true, status: 'up' };
  }

  /** Readiness: the store answers (and Redis, when configured), and the process is not draining. */
  @Get('readyz')
  @ApiOkResponse({ schema: { example: { ok: true, checks: { store: 'up', redis: 'not_configured', draining: false } } } })
  @ApiServiceUnavailableResponse({ description: 'A dependency is down or the process is shutting down' })
  async readyz() {
    const r = await this.readiness.check();
    if (!r.ready) throw new AppError('not_ready', r.errors.join('; '), 503, { checks: r.checks });
    return { ok: true, checks: r.checks };
  }
}
