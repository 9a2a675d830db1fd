import { Controller, Get, Module } from '@nestjs/common';
import { AccessContext, Authenticated, Caller, Throttle } from '@app/access';

/** Test-only routes that exercise the access guard's scope and bucket rules. */
@Controller('__access')
class ScopeProbeController {
  @Get('payments')
  @Authenticated('payments:write')
  payments(@Caller() caller: AccessContext) {
    return { ok: true, org_id: caller.principal?.orgId };
  }

  @Get('public')
  @Throttle('public_verify_window')
  publicRead(@Caller() caller: AccessContext) {
    return { ok: true, lane: caller.lane, did_status: caller.didStatus };
  }

  /** Stands in for the badge route: the badge_window bucket (300/min per IP). */
  @Get('badge')
  @Throttle('badge_window')
  badge(@Caller() caller: AccessContext) {
    return { ok: true, lane: caller.lane };
  }
}

@Module({ controllers: [ScopeProbeController] })
export class ScopeProbeModule {}
