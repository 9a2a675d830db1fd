import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AppError } from '@app/core';
import { ZodPipe } from '@app/http';
import { IdempotencyService } from '@app/idempotency';
import {
  CreateEndpointCommand,
  createEndpointBody,
  DeleteEndpointCommand,
  DELIVERY_ID_RE,
  ENDPOINT_ID_RE,
  GetDeliveryQuery,
  GetEndpointQuery,
  ListDeliveriesQuery,
  ListEndpointsQuery,
  RecoverDeliveriesCommand,
  recoverDeliveriesQuery,
  RedeliverDeliveryCommand,
  RotateEndpointSecretCommand,
  TestEndpointCommand,
  UpdateEndpointCommand,
  updateEndpointBody,
  WEBHOOK_EVENT_TYPES,
} from '@app/webhooks';
import { ConsoleAuth, ConsoleViewer } from '../people/console-auth';
import type { FormProblem } from '../pages/field-messages';
import { DeliveryDetail, DeliveryItem, deliveryPage, EndpointDraft, EndpointItem, endpointPage, endpointsPage, eventField, secretPage } from '../pages/webhooks.pages';
import { attempt, flashOf, signedIn } from './console-forms';
import { checkCsrf, ConsolePageFilter, ConsoleRequest, formField, redirect, requireScope, sendPage } from './console-http';

const notFound = () => new AppError('not_found', 'not found', 404);
const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'];

/** The create form's route: its idempotency path, and its name in the metrics (as the API's route templates are). */
const CREATE_ROUTE = '/console/webhooks';
/** The create form's one-time key (a uuid the page puts in it). */
const FORM_KEY_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const DONE: Record<string, string> = {
  test: 'A webhook.test ping is on its way: it shows in the deliveries below.',
  saved: 'The endpoint is saved.',
  disabled: 'The endpoint is disabled: nothing is sent to it until it is enabled again.',
  enabled: 'The endpoint is enabled.',
  deleted: 'The endpoint is deleted; its pending deliveries are abandoned.',
  redelivered: 'A new series of attempts has started, with the same webhook-id.',
};

/** The form's fields as the API's JSON body: event types from their checkboxes, an empty description as none. */
function draftOf(body: unknown): EndpointDraft {
  return { url: formField(body, 'url').trim(), description: formField(body, 'description'), event_types: WEBHOOK_EVENT_TYPES.filter((t) => formField(body, eventField(t)) === 'on') };
}

/**
 * The console's webhooks pages (GET and forms under /console/webhooks): every one dispatches the
 * API's own commands and queries, with the scope its endpoint needs (webhooks:manage), so a page
 * and its endpoint refuse alike. Another organization's ids answer the 404 page, as the API does.
 */
@ApiExcludeController()
@Controller('console/webhooks')
@UseFilters(ConsolePageFilter)
export class WebhooksConsoleController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    private readonly auth: ConsoleAuth,
    private readonly idempotency: IdempotencyService,
  ) {}

  @Get()
  async list(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Query('done') done: unknown) {
    const viewer = await this.viewer(req, reply);
    if (!viewer) return;
    sendPage(reply, 200, endpointsPage(viewer, await this.endpoints(viewer), WEBHOOK_EVENT_TYPES, { flash: flashOf(done, DONE) }));
  }

  @Post()
  @HttpCode(200)
  async create(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Body() body: unknown) {
    const viewer = await this.viewer(req, reply, body);
    if (!viewer) return;
    const draft = draftOf(body);
    const formKey = formField(body, 'form_key');
    const result = await attempt(async () => {
      const input = new ZodPipe(createEndpointBody).transform({ url: draft.url, event_types: draft.event_types, ...(draft.description.trim() ? { description: draft.description } : {}) });
      let secret: string | null = null;
      const create = async () => {
        const created = await this.commands.execute<CreateEndpointCommand, EndpointItem & { secret: string }>(new CreateEndpointCommand(viewer.user.org_id, input));
        secret = created.secret;
        return { status: 200, body: { id: created.id, url: created.url } };
      };
      // The form's one-time key (as the API's Idempotency-Key): sent again (a reload of the answer),
      // it finds the endpoint made the first time instead of making another. Only the endpoint's
      // id is kept with the key, never its secret, so the repeat says the secret was shown once.
      const answer = FORM_KEY_RE.test(formKey)
        ? await this.idempotency.run({ orgId: viewer.user.org_id, caller: `user:${viewer.user.user_id}`, key: `console-form-${formKey}`, method: 'POST', path: CREATE_ROUTE, body: input, route: CREATE_ROUTE }, create)
        : await create();
      return { endpoint: answer.body, secret: secret as string | null };
    });
    if (!result.ok) return sendPage(reply, result.problem.status, endpointsPage(viewer, await this.endpoints(viewer), WEBHOOK_EVENT_TYPES, { problem: result.problem, draft }));
    req.log.info({ event: 'console.webhook_endpoint_created', user_id: viewer.user.user_id, endpoint_id: result.value.endpoint.id, repeated: result.value.secret === null }, 'console webhook endpoint');
    sendPage(reply, 200, secretPage(viewer, result.value.endpoint, result.value.secret, null));
  }

  @Get('deliveries/:id')
  async delivery(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Query('done') done: unknown) {
    const viewer = await this.viewer(req, reply);
    if (!viewer) return;
    if (!DELIVERY_ID_RE.test(id)) throw notFound();
    const d = await this.queries.execute<GetDeliveryQuery, DeliveryDetail>(new GetDeliveryQuery(viewer.user.org_id, id));
    sendPage(reply, 200, deliveryPage(viewer, d, flashOf(done, DONE)));
  }

  @Post('deliveries/:id/redeliver')
  @HttpCode(200)
  async redeliver(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Body() body: unknown) {
    const viewer = await this.viewer(req, reply, body);
    if (!viewer) return;
    if (!DELIVERY_ID_RE.test(id)) throw notFound();
    await this.commands.execute(new RedeliverDeliveryCommand(viewer.user.org_id, id, `user:${viewer.user.user_id}`));
    redirect(reply, `/console/webhooks/deliveries/${id}?done=redelivered`);
  }

  @Get(':id')
  async endpoint(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Query() q: Record<string, unknown>) {
    const viewer = await this.viewer(req, reply);
    if (!viewer) return;
    const e = await this.endpointOf(viewer, id);
    sendPage(reply, 200, endpointPage(viewer, e, WEBHOOK_EVENT_TYPES, await this.deliveries(viewer, id, q), { flash: flashOf(q.done, DONE), since: this.defaultSince() }));
  }

  @Post(':id')
  @HttpCode(200)
  async edit(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Body() body: unknown) {
    const viewer = await this.viewer(req, reply, body);
    if (!viewer) return;
    const e = await this.endpointOf(viewer, id);
    const draft = draftOf(body);
    const result = await attempt(async () => {
      const changes = new ZodPipe(updateEndpointBody).transform({ url: draft.url, event_types: draft.event_types, description: draft.description.trim() ? draft.description : null });
      return this.commands.execute(new UpdateEndpointCommand(viewer.user.org_id, id, changes));
    });
    if (!result.ok) return this.endpointForm(reply, viewer, e, result.problem, { problem: result.problem, draft });
    redirect(reply, `/console/webhooks/${id}?done=saved`);
  }

  @Post(':id/:action')
  @HttpCode(200)
  async act(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Param('action') action: string, @Body() body: unknown) {
    const viewer = await this.viewer(req, reply, body);
    if (!viewer) return;
    if (!ENDPOINT_ID_RE.test(id)) throw notFound();
    const org = viewer.user.org_id;
    const actor = `user:${viewer.user.user_id}`;
    const base = `/console/webhooks/${id}`;
    switch (action) {
      case 'test':
        await this.commands.execute(new TestEndpointCommand(org, id, actor));
        return redirect(reply, `${base}?done=test`);
      case 'rotate-secret': {
        const e = await this.endpointOf(viewer, id);
        const r = await this.commands.execute<RotateEndpointSecretCommand, { secret: string; previous_secret_expires_at: string }>(new RotateEndpointSecretCommand(org, id));
        return sendPage(reply, 200, secretPage(viewer, e, r.secret, r));
      }
      case 'disable':
      case 'enable':
        await this.commands.execute(new UpdateEndpointCommand(org, id, { enabled: action === 'enable' }));
        return redirect(reply, `${base}?done=${action}d`);
      case 'delete':
        await this.commands.execute(new DeleteEndpointCommand(org, id));
        return redirect(reply, '/console/webhooks?done=deleted');
      case 'recover': {
        const e = await this.endpointOf(viewer, id);
        const since = formField(body, 'since').trim();
        const result = await attempt(async () => {
          const q = new ZodPipe(recoverDeliveriesQuery, 'query').transform({ since });
          return this.commands.execute<RecoverDeliveriesCommand, { recovered: number }>(new RecoverDeliveriesCommand(org, id, new Date(q.since), actor));
        });
        if (!result.ok) return this.endpointForm(reply, viewer, e, result.problem, { sinceProblem: result.problem, since });
        const n = result.value.recovered;
        return this.endpointForm(reply, viewer, e, null, { since, flash: { kind: 'ok', text: `${n} failed ${n === 1 ? 'delivery is' : 'deliveries are'} being sent again.` } });
      }
      default:
        throw notFound();
    }
  }

  /** Signed in, with the scope every webhook page needs; a form's CSRF token checked first. */
  private async viewer(req: ConsoleRequest, reply: FastifyReply, form?: unknown): Promise<ConsoleViewer | null> {
    const viewer = await signedIn(this.auth, req, reply);
    if (!viewer) return null;
    if (form !== undefined) checkCsrf(viewer.csrf, form);
    requireScope(viewer, 'webhooks:manage');
    return viewer;
  }

  private async endpoints(viewer: ConsoleViewer): Promise<EndpointItem[]> {
    return (await this.queries.execute<ListEndpointsQuery, { items: EndpointItem[] }>(new ListEndpointsQuery(viewer.user.org_id))).items;
  }

  /** The organization's endpoint; a malformed id, an unknown one and another organization's are all the 404 page. */
  private async endpointOf(viewer: ConsoleViewer, id: string): Promise<EndpointItem> {
    if (!ENDPOINT_ID_RE.test(id)) throw notFound();
    return this.queries.execute<GetEndpointQuery, EndpointItem>(new GetEndpointQuery(viewer.user.org_id, id));
  }

  private async deliveries(viewer: ConsoleViewer, endpointId: string, q: Record<string, unknown>) {
    const status = typeof q.status === 'string' && DELIVERY_STATUSES.includes(q.status) ? (q.status as 'pending') : undefined;
    const cursor = typeof q.cursor === 'string' && q.cursor ? q.cursor.slice(0, 300) : undefined;
    const page = await this.queries.execute<ListDeliveriesQuery, { items: DeliveryItem[]; next_cursor: string | null }>(
      new ListDeliveriesQuery(viewer.user.org_id, { endpoint_id: endpointId, status, limit: 25, cursor }),
    );
    return { ...page, status };
  }

  private async endpointForm(
    reply: FastifyReply,
    viewer: ConsoleViewer,
    e: EndpointItem,
    problem: (FormProblem & { status: number }) | null,
    options: Parameters<typeof endpointPage>[4],
  ) {
    sendPage(reply, problem?.status ?? 200, endpointPage(viewer, e, WEBHOOK_EVENT_TYPES, await this.deliveries(viewer, e.id, {}), { since: this.defaultSince(), ...options }));
  }

  /** The recovery form starts a day back. */
  private defaultSince(): string {
    return new Date(Date.now() - 24 * 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
}
