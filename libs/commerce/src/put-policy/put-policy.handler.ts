import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DomainError } from '@app/core';
import { retryOnConflict } from '@app/event-store';
import { isPolicyId, policyHash } from '../domain/policy';
import { recordPolicyVersion } from '../domain/policy.aggregate';
import { PolicyRepository, PolicyVersion } from '../policies/policy.repository';
import { PutPolicyCommand } from './put-policy.command';

/**
 * Load the policy's latest version from its stream, let the aggregate decide (a new version, or
 * nothing when the document hashes the same), append at that version's revision. A PUT racing
 * another one decides again on the version that won.
 */
@CommandHandler(PutPolicyCommand)
export class PutPolicyHandler implements ICommandHandler<PutPolicyCommand, PolicyVersion & { recorded: boolean }> {
  constructor(private readonly policies: PolicyRepository) {}

  async execute(cmd: PutPolicyCommand): Promise<PolicyVersion & { recorded: boolean }> {
    if (!isPolicyId(cmd.policyId)) {
      throw new DomainError('validation_failed', 'Invalid policy_id', [{ field: 'policy_id', message: 'must be a policy id: 1..64 of letters, digits, _ -' }]);
    }
    const hash = policyHash(cmd.policy);
    // Unbounded, as a PUT always ends: each loss means another version landed to decide on.
    return retryOnConflict(async () => {
      const latest = await this.policies.latest(cmd.orgId, cmd.policyId);
      const events = recordPolicyVersion(latest, { orgId: cmd.orgId, policyId: cmd.policyId, policy: cmd.policy, policyHash: hash, actor: cmd.actor });
      if (events.length === 0) return { ...latest!, recorded: false };
      const result = await this.policies.save(cmd.orgId, cmd.policyId, latest, events);
      return { policy_id: cmd.policyId, version: events[0].data.version, policy: cmd.policy, policy_hash: hash, created_at: result.events[0].recorded_at, recorded: true };
    }, Infinity);
  }
}
