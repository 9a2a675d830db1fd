import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { ApproveAuthorizationCommand, AUTHORIZATION_ID_RE, parseListingBound, RejectAuthorizationCommand, TRANSACTION_ID_RE, TRANSACTION_STATUSES, TransactionStatus } from '@app/commerce';
import { AppError, DomainError } from '@app/core';
import { ZodPipe } from '@app/http';
import { ConsoleAuth, ConsoleViewer } from '../people/console-auth';
import { approvalsPage } from '../pages/approvals.page';
import { accountPage } from '../pages/misc.pages';
import { timelinePage, transactionsPage } from '../pages/transactions.pages';
import { SetPasswordCommand } from '../set-password/set-password.command';
import { ConsoleReads } from './console-reads';
import { checkCsrf, ConsolePageFilter, ConsoleRequest, formField, redirect, requireScope, sendPage } from './console-http';
import { sessionTokenOf } from './console-forms';
import { parseAmount } from './amount';
import { SignInThrottle } from './sign-in-throttle';

const empty = (v: unknown) => (v === '' ? undefined : v);
/** As the API's (listingBoundField); the form shows what was typed, the query gets the canonical instant. */
const bound = z.string().refine((v) => parseListingBound(v) !== null, 'must be an ISO-8601 date or date-time');
/** The API's listing filters (GET /api/cdp/transactions); an empty field of the form means "any". */
const listQuery = z.strictObject({
  status: z.preprocess(empty, z.enum(TRANSACTION_STATUSES as [TransactionStatus, ...TransactionStatus[]]).optional()),
  merchant_id: z.preprocess(empty, z.string().max(128).optional()),
  agent: z.preprocess(empty, z.string().max(256).optional()),
  from: z.preprocess(empty, bound.optional()),
  to: z.preprocess(empty, bound.optional()),
  cursor: z.preprocess(empty, z.string().max(512).optional()),
});
const authParams = z.object({ authorization_id: z.string().regex(AUTHORIZATION_ID_RE, 'must be an authorization id') });
const notFound = () => new AppError('not_found', 'not found', 404);

/** The console's pages for a signed-in person. Every action dispatches the API's own commands and reads its queries. */
@ApiExcludeController()
@Controller('console')
@UseFilters(ConsolePageFilter)
export class ConsoleController {
  constructor(
    private readonly commands: CommandBus,
    private readonly auth: ConsoleAuth,
    private readonly reads: ConsoleReads,
    private readonly throttle: SignInThrottle,
  ) {}

  @Get('approvals')
  async approvals(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Query('cursor') cursor: unknown, @Query('done') done: unknown) {
    const viewer = await this.viewer(req, reply);
    if (!viewer) return;
    requireScope(viewer, 'payments:read');
    const { items, next_cursor } = await this.reads.pendingReviews(viewer.user.org_id, typeof cursor === 'string' && cursor ? cursor.slice(0, 512) : undefined);
    const flash = done === 'approved' || done === 'rejected' ? { kind: 'ok' as const, text: `The payment was ${done}; your signed review is in its timeline.` } : null;
    sendPage(reply, 200, approvalsPage(viewer, items, next_cursor, new Date(), flash));
  }

  @Post('approvals/:authorization_id/:action')
  @HttpCode(200)
  async review(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Param() params: Record<string, string>, @Body() body: unknown) {
    const viewer = await this.viewer(req, reply);
    if (!viewer) return;
    checkCsrf(viewer.csrf, body);
    requireScope(viewer, 'approvals:manage');
    const action = params.action;
    if (action !== 'approve' && action !== 'reject') throw notFound();
    const { authorization_id: authId } = new ZodPipe(authParams, 'params').transform({ authorization_id: params.authorization_id });
    const note = formField(body, 'note').trim().slice(0, 2000) || null;
    const actor = `user:${viewer.user.user_id}`;
    if (action === 'approve') {
      // The form says the currency the amount is written in; the aggregate refuses any amount above the one asked.
      const amount = parseAmount(formField(body, 'amount'), formField(body, 'currency'));
      await this.commands.execute(new ApproveAuthorizationCommand(viewer.user.org_id, authId, actor, amount, note, viewer.user.display_name));
    } else {
      await this.commands.execute(new RejectAuthorizationCommand(viewer.user.org_id, authId, actor, note, viewer.user.display_name));
    }
    req.log.info({ event: `console.review_${action}`, user_id: viewer.user.user_id, authorization_id: authId }, 'console review');
    redirect(reply, `/console/approvals?done=${action === 'approve' ? 'approved' : 'rejected'}`);
  }

  @Get('transactions')
  async transactions(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Query() raw: unknown) {
    const viewer = await this.viewer(req, reply);
    if (!viewer) return;
    requireScope(viewer, 'payments:read');
    const q = new ZodPipe(listQuery, 'query').transform(raw ?? {});
    const { cursor, ...filters } = q;
    const instants = { from: filters.from && parseListingBound(filters.from)!, to: filters.to && parseListingBound(filters.to)! };
    const page = await this.reads.transactions(viewer.user.org_id, { ...filters, ...instants, cursor, limit: 50 });
    sendPage(reply, 200, transactionsPage(viewer, page.items, filters, page.next_cursor));
  }

  /** The timeline as the API serves it (and the receipt), as a file for `sigil timeline verify` offline. */
  @Get('transactions/:id/:file')
  async download(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Param('file') file: string) {
    const viewer = await this.viewer(req, reply);
    if (!viewer) return;
    const what = file === 'timeline.json' ? 'timeline' : file === 'receipt.json' ? 'receipt' : null;
    if (!what || !TRANSACTION_ID_RE.test(id)) throw notFound();
    requireScope(viewer, what === 'timeline' ? 'payments:read' : 'receipts:read');
    const body = await this.reads.download(viewer.user.org_id, id, what);
    void reply
      .header('content-type', 'application/json; charset=utf-8')
      .header('content-disposition', `attachment; filename="${what}-${id}.json"`)
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'no-store')
      .send(JSON.stringify(body, null, 2));
  }

  @Get('transactions/:id')
  async timeline(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Param('id') id: string) {
    const viewer = await this.viewer(req, reply);
    if (!viewer) return;
    requireScope(viewer, 'payments:read');
    // A malformed id, an unknown one and another organization's all answer the same 404 page.
    if (!TRANSACTION_ID_RE.test(id)) throw notFound();
    const { timeline, replay, reviews } = await this.reads.timeline(viewer.user.org_id, id);
    sendPage(reply, 200, timelinePage(viewer, timeline, replay, reviews));
  }

  @Get('account')
  async account(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Query('done') done: unknown) {
    const viewer = await this.viewer(req, reply);
    if (!viewer) return;
    sendPage(reply, 200, accountPage(viewer, done === 'password' ? { kind: 'ok', text: 'Your password is saved; your other sessions are ended.' } : null, viewer.user.password_hash !== null));
  }

  @Post('account/password')
  @HttpCode(200)
  async setPassword(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Body() body: unknown) {
    const viewer = await this.viewer(req, reply);
    if (!viewer) return;
    checkCsrf(viewer.csrf, body);
    // The current password is guessed no faster here than at sign-in: the same limits, failures counted alike.
    const current = formField(body, 'current_password');
    if (viewer.user.password_hash !== null) await this.throttle.admit(req.ip, viewer.user.email);
    try {
      await this.commands.execute(new SetPasswordCommand(viewer.user.org_id, viewer.user.user_id, formField(body, 'password'), { currentPassword: current, sessionId: viewer.session.session_id }));
    } catch (err) {
      const wrongCurrent = err instanceof DomainError && Array.isArray(err.details) && err.details.some((d: { field?: string }) => d.field === 'current_password');
      if (wrongCurrent) await this.throttle.failed(viewer.user.email);
      throw err;
    }
    redirect(reply, '/console/account?done=password');
  }

  /** The signed-in person, or a redirect to the sign-in page (and null). */
  private async viewer(req: ConsoleRequest, reply: FastifyReply): Promise<ConsoleViewer | null> {
    const viewer = await this.auth.viewer(sessionTokenOf(this.auth, req));
    req.consoleViewer = viewer;
    if (!viewer) redirect(reply, '/console/sign-in');
    return viewer;
  }
}
