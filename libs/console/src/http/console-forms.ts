import type { FastifyReply } from 'fastify';
import { toErrorResponse } from '@app/http';
import type { ConsoleAuth, ConsoleViewer } from '../people/console-auth';
import { FormProblem, issuesOf } from '../pages/field-messages';
import { ConsoleRequest, isSecure, redirect } from './console-http';
import { readCookie, SESSION_COOKIE } from './cookies';

/** The session cookie's value, under its name for this scheme (`__Host-sigil_session` over HTTPS). */
export const sessionTokenOf = (auth: ConsoleAuth, req: ConsoleRequest) => readCookie(req.headers.cookie, SESSION_COOKIE, isSecure(req, auth.baseUrl));

/** The signed-in person, or a redirect to the sign-in page (and null). */
export async function signedIn(auth: ConsoleAuth, req: ConsoleRequest, reply: FastifyReply): Promise<ConsoleViewer | null> {
  const viewer = await auth.viewer(sessionTokenOf(auth, req));
  req.consoleViewer = viewer;
  if (!viewer) redirect(reply, '/console/sign-in');
  return viewer;
}

/**
 * What a refused form shows beside its fields: the API's own answer (its message and 400
 * `details`) for a refusal of the input (400, 402, 409, 413, 422). Anything else (403, 404, a
 * failure) is rethrown for the error page.
 */
export function formProblem(err: unknown): FormProblem & { status: number } {
  const { status, body } = toErrorResponse(err);
  if (![400, 402, 409, 413, 422].includes(status)) throw err;
  return { status, message: body.message, issues: issuesOf((body as { details?: unknown }).details) };
}

/** Runs a command for a form: its result, or the problem to show with the form (status ≥ 400). */
export async function attempt<T>(run: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; problem: FormProblem & { status: number } }> {
  try {
    return { ok: true, value: await run() };
  } catch (err) {
    return { ok: false, problem: formProblem(err) };
  }
}

/** A fixed flash message picked by a `done` query parameter (the page never echoes the parameter itself). */
export function flashOf(done: unknown, messages: Record<string, string>): { kind: 'ok'; text: string } | null {
  return typeof done === 'string' && Object.hasOwn(messages, done) ? { kind: 'ok', text: messages[done] } : null;
}
