import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import { IDEMPOTENT, IdempotentOptions } from './idempotent.metadata';

/**
 * The route honours `Idempotency-Key` (DESIGN.md): the first request with a key runs, later
 * ones from the same caller with the same key and body get its response with `Idempotent-Replayed: true`. The route
 * takes `@IdempotencyOf() call: IdempotentCall` and does its work through it:
 * `return call.run(() => work)` (idempotent-call.ts). Needs the access guard on the route
 * (@Authenticated, @Throttle or @LaneAware): keys are scoped to the caller's organization and bound to the API key that first sent them. The
 * module declaring the controller must import IdempotencyModule.
 */
export const Idempotent = (options: IdempotentOptions = {}) =>
  applyDecorators(
    SetMetadata(IDEMPOTENT, { required: options.required ?? false, sealResponse: options.sealResponse ?? false }),
    ApiHeader({
      name: 'Idempotency-Key',
      required: options.required ?? false,
      description: '1..255 printable ASCII characters; the same key and body from the same API key within 24 h replays the first response; the key sent by another API key of the organization is 422 idempotency_key_reused',
    }),
  );
