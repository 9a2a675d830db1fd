import { DomainError } from '@app/core';
import { isTargetProblem, parseTarget } from '../domain/target';
import { TargetGuard } from '../sending/target-guard';

/** Refuses URLs that are not http(s), carry credentials, or reach non-public addresses (after DNS resolution). */
export class TargetCheck {
  constructor(private readonly guard: TargetGuard) {}

  async check(raw: string): Promise<void> {
    const target = parseTarget(raw);
    if (isTargetProblem(target)) throw new DomainError('validation_failed', `Invalid url: ${target.message}`, [{ field: 'url', message: target.message }]);
    const verdict = await this.guard.check(target);
    if (verdict.ok) return;
    if (verdict.kind === 'unresolvable') throw new DomainError('webhook_target_unresolvable', `The webhook url's host cannot be resolved: ${verdict.message}`);
    throw new DomainError('webhook_target_not_allowed', `Webhook targets must be public addresses: ${verdict.message}`);
  }
}
