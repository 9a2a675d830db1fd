import { Body, Controller, Get, HttpCode, Inject, OnModuleInit, Param, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { CommandBus } from '@nestjs/cqrs';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { APP_CONFIG, AppConfig, AppError } from '@app/core';
import { EditRegistryEntryCommand, ISSUANCE_BODY_LIMIT_BYTES, IssueCertificateCommand, MAX_CONTENT_CHARS, SignedManifest } from '@app/notary';
import { ConsoleAuth, ConsoleViewer } from '../people/console-auth';
import { ARTIFACT_CHOICES, certificatesPage, issuedPage } from '../pages/certificates.pages';
import { ConsoleCertificates } from '../certificates/console-certificates.repository';
import { attempt, flashOf, signedIn } from './console-forms';
import { checkCsrf, ConsolePageFilter, ConsoleRequest, formField, redirect, requireScope, sendPage } from './console-http';
import { fileFields, registerConsoleMultipartParser } from './multipart-parser';

const notFound = () => new AppError('not_found', 'not found', 404);
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const DONE = { published: 'The certificate is listed in the public registry.' };
const bad = (field: string, message: string, status = 400) => new AppError(status === 413 ? 'content_too_large' : 'validation_failed', message, status, [{ field, message }]);

/**
 * The console's certificates: issue one from a file (multipart) or pasted text with the API's
 * IssueCertificateCommand (its size limit: MAX_CONTENT_CHARS characters, the route's body limit),
 * list the organization's certificates, publish one with the API's EditRegistryEntryCommand, and
 * open its public verify page. Issuing and publishing need certificates:write, as in the API.
 */
@ApiExcludeController()
@Controller('console/certificates')
@UseFilters(ConsolePageFilter)
export class CertificatesConsoleController implements OnModuleInit {
  constructor(
    private readonly commands: CommandBus,
    private readonly auth: ConsoleAuth,
    private readonly http: HttpAdapterHost,
    private readonly reads: ConsoleCertificates,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    registerConsoleMultipartParser(this.http.httpAdapter.getInstance<FastifyInstance>(), { bodyLimit: this.config.BODY_LIMIT_BYTES, uploadLimit: ISSUANCE_BODY_LIMIT_BYTES, auth: this.auth });
  }

  @Get()
  async list(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Query('cursor') cursor: unknown, @Query('done') done: unknown) {
    const viewer = await signedIn(this.auth, req, reply);
    if (!viewer) return;
    const page = await this.reads.page(viewer.user.org_id, typeof cursor === 'string' && cursor ? cursor.slice(0, 300) : undefined);
    sendPage(reply, 200, certificatesPage(viewer, page, { flash: flashOf(done, DONE) }));
  }

  @Post()
  @HttpCode(200)
  async issue(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Body() body: unknown) {
    const viewer = await this.writer(req, reply, body);
    if (!viewer) return;
    const file = fileFields('file');
    const pasted = formField(body, 'content');
    const draft = { content: pasted.length <= 100_000 ? pasted : '', artifact_type: formField(body, 'artifact_type') || 'output', visibility: formField(body, 'visibility') || 'private' };
    const result = await attempt(async () => {
      if (formField(body, file.error)) throw bad('file', 'must be a UTF-8 text file (a certificate covers text content, as in the API)');
      const fromFile = formField(body, file.content);
      if (fromFile && pasted) throw bad('', 'choose a file or paste the content, not both');
      const content = fromFile || pasted;
      if (!content) throw bad('content', 'choose a file or paste the content');
      if (content.length > MAX_CONTENT_CHARS) throw bad(fromFile ? 'file' : 'content', `exceeds ${MAX_CONTENT_CHARS.toLocaleString('en')} characters`, 413);
      if (!(ARTIFACT_CHOICES as readonly string[]).includes(draft.artifact_type)) throw bad('artifact_type', `must be one of ${ARTIFACT_CHOICES.join(', ')}`);
      if (draft.visibility !== 'public' && draft.visibility !== 'private') throw bad('visibility', 'must be public or private');
      const filename = formField(body, file.filename).replaceAll('\u0000', '').slice(0, 255) || undefined;
      const options = { filename, artifact_type: draft.artifact_type as (typeof ARTIFACT_CHOICES)[number], visibility: draft.visibility as 'public' | 'private' };
      return this.commands.execute<IssueCertificateCommand, SignedManifest>(new IssueCertificateCommand(viewer.user.org_id, content, options));
    });
    if (!result.ok) {
      return sendPage(reply, result.problem.status, certificatesPage(viewer, await this.reads.page(viewer.user.org_id, undefined), { problem: result.problem, draft }));
    }
    const m = result.value;
    req.log.info({ event: 'console.certificate_issued', user_id: viewer.user.user_id, certificate_id: m.payload.certification_id }, 'console certificate');
    sendPage(reply, 200, issuedPage(viewer, { certificate_id: m.payload.certification_id, dataset_hash: m.payload.dataset_hash, issued_at: m.payload.timestamp, signing_key_id: m.signature.key_id }, draft.visibility));
  }

  @Post(':id/publish')
  @HttpCode(200)
  async publish(@Req() req: ConsoleRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Body() body: unknown) {
    const viewer = await this.writer(req, reply, body);
    if (!viewer) return;
    // A malformed id, an unknown one and another organization's are all the 404 page (the aggregate says not_found).
    if (!UUID_RE.test(id)) throw notFound();
    await this.commands.execute(new EditRegistryEntryCommand(viewer.user.org_id, id, { visibility: 'public' }));
    redirect(reply, '/console/certificates?done=published');
  }

  private async writer(req: ConsoleRequest, reply: FastifyReply, form: unknown): Promise<ConsoleViewer | null> {
    const viewer = await signedIn(this.auth, req, reply);
    if (!viewer) return null;
    checkCsrf(viewer.csrf, form);
    requireScope(viewer, 'certificates:write');
    return viewer;
  }
}
