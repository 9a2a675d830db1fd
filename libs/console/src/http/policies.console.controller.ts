import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { DEFAULT_POLICY_ID, isPolicyId, parseAuthorizationRequest, parsePolicy, PolicyService, PolicyVersion, PutPolicyCommand } from '@app/commerce';
import { AppError } from '@app/core';
import { ConsoleAuth, ConsoleViewer } from '../people/console-auth';
import type { FormProblem } from '../pages/field-messages';
import { PolicyPageOptions, policyPage, SimulationView, versionsPage } from '../pages/policies.pages';
import { policyDiff } from '../pages/policy-diff';
import { attempt, flashOf, signedIn } from './console-forms';
import { checkCsrf, ConsolePageFilter, ConsoleRequest, formField, redirect, requireScope, sendPage } from './console-http';

const notFound = () => new AppError('not_found', 'not found', 404);

const DONE = { saved: 'A new version is recorded; it decides the next authorization.', unchanged: 'Nothing recorded: the document is the current version.' };

/** The typed text as JSON, or a 400 naming where it stops being JSON (the API answers invalid_json for the same). */
function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const at = /position (\d+)/.exec((err as Error).message);
    let where = '';
    if (at) {
      const before = text.slice(0, Number(at[1])).split('\n');
      where = ` at line ${before.length}, column ${before[before.length - 1].length + 1}`;
    }
    throw new AppError('invalid_json', `The ${what} is not valid JSON${where}`, 400, [{ field: '', message: `is not valid JSON${where}` }]);
  }
}

/**
 * The console's policy pages: the current version, an editor whose refusals show per field (the
 * API's own `parsePolicy` and its 400 details), versions with a line diff, and a simulation
 * against the current version. Reads and the simulation go through the API's PolicyService, saving
 * through its PutPolicyCommand; the scopes are the API's (either payments scope reads, payments:write saves).
 */
@ApiExcludeController()
@Controller('console/policies')
@UseFilters(ConsolePageFilter)
export class PoliciesConsoleController {
  constructor(
    private readonly commands: CommandBus,
    private readonly auth: ConsoleAuth,
    private readonly policies: PolicyService,
  ) {}

  @Get()
  async open(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Query('policy_id') policyId: unknown) {
    if (!(await this.reader(req, reply))) return;
    const id = typeof policyId === 'string' && policyId.trim() ? policyId.trim() : DEFAULT_POLICY_ID;
    if (!isPolicyId(id)) throw notFound();
    redirect(reply, `/console/policies/${id}`);
  }

  @Get(':policy_id')
  async show(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Param('policy_id') policyId: string, @Query('done') done: unknown) {
    const viewer = await this.reader(req, reply);
    if (!viewer) return;
    await this.render(reply, 200, viewer, policyId, { flash: flashOf(done, DONE) });
  }

  @Post(':policy_id')
  @HttpCode(200)
  async save(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Param('policy_id') policyId: string, @Body() body: unknown) {
    const viewer = await this.reader(req, reply, body);
    if (!viewer) return;
    requireScope(viewer, 'payments:write');
    if (!isPolicyId(policyId)) throw notFound();
    const draft = formField(body, 'policy');
    const result = await attempt(() => {
      const policy = parsePolicy(parseJson(draft, 'policy document'));
      return this.commands.execute<PutPolicyCommand, PolicyVersion & { recorded: boolean }>(new PutPolicyCommand(viewer.user.org_id, policyId, policy, `user:${viewer.user.user_id}`));
    });
    if (!result.ok) return this.render(reply, result.problem.status, viewer, policyId, { draft, problem: result.problem });
    req.log.info({ event: 'console.policy_saved', user_id: viewer.user.user_id, policy_id: policyId, version: result.value.version, recorded: result.value.recorded }, 'console policy');
    redirect(reply, `/console/policies/${policyId}?done=${result.value.recorded ? 'saved' : 'unchanged'}`);
  }

  @Post(':policy_id/simulate')
  @HttpCode(200)
  async simulate(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Param('policy_id') policyId: string, @Body() body: unknown) {
    const viewer = await this.reader(req, reply, body);
    if (!viewer) return;
    if (!isPolicyId(policyId)) throw notFound();
    const request = formField(body, 'request');
    const result = await attempt(async () => {
      const parsed = parseAuthorizationRequest(parseJson(request, 'request'));
      if (parsed.policy_id !== undefined && parsed.policy_id !== policyId) {
        throw new AppError('validation_failed', 'Invalid authorization request: policy_id', 400, [{ field: 'policy_id', message: `must be ${policyId}, the policy being simulated, or be left out` }]);
      }
      const simulation = await this.policies.simulate(viewer.user.org_id, policyId, parsed);
      if (!simulation) throw notFound();
      return simulation as SimulationView;
    });
    if (!result.ok) return this.render(reply, result.problem.status, viewer, policyId, { request, simulationProblem: result.problem });
    await this.render(reply, 200, viewer, policyId, { request, simulation: result.value });
  }

  @Get(':policy_id/versions')
  async versions(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Param('policy_id') policyId: string, @Query('from') from: unknown, @Query('to') to: unknown) {
    const viewer = await this.reader(req, reply);
    if (!viewer) return;
    if (!isPolicyId(policyId)) throw notFound();
    const versions = await this.policies.versions(viewer.user.org_id, policyId);
    if (!versions.length) throw notFound();
    const byNumber = new Map(versions.map((v) => [v.version, v]));
    // Default: the current version against the one before it.
    const pick = { from: Number(from ?? versions[Math.min(1, versions.length - 1)].version), to: Number(to ?? versions[0].version) };
    const a = byNumber.get(pick.from);
    const b = byNumber.get(pick.to);
    if ((from !== undefined || to !== undefined) && (!a || !b)) throw notFound();
    sendPage(reply, 200, versionsPage(viewer, policyId, versions, a && b ? pick : null, a && b && versions.length > 1 ? policyDiff(a.policy, b.policy) : null));
  }

  /** Signed in with either payments scope (the API's read rule); a form's CSRF token checked first. */
  private async reader(req: ConsoleRequest, reply: FastifyReply, form?: unknown): Promise<ConsoleViewer | null> {
    const viewer = await signedIn(this.auth, req, reply);
    if (!viewer) return null;
    if (form !== undefined) checkCsrf(viewer.csrf, form);
    if (!viewer.scopes.includes('payments:write')) requireScope(viewer, 'payments:read');
    return viewer;
  }

  private async render(reply: FastifyReply, status: number, viewer: ConsoleViewer, policyId: string, options: PolicyPageOptions & { problem?: FormProblem | null }) {
    // Policies belong to their organization by id: an unknown id is an empty editor, never another organization's policy.
    if (!isPolicyId(policyId)) throw notFound();
    const current = await this.policies.current(viewer.user.org_id, policyId);
    sendPage(reply, status, policyPage(viewer, policyId, current, viewer.scopes.includes('payments:write'), options));
  }
}
