import { z } from 'zod';
import { apiInput, apiOutput } from '@app/http';
import { ROLES } from '../domain/roles';

/** Request and response shapes of /api/users and /api/sessions, named in the OpenAPI document (and so in the SDK). */
const role = z.enum(ROLES);

export const inviteUserBody = apiInput(
  'InviteUserRequest',
  z.strictObject({
    email: z.string().min(3).max(254),
    display_name: z.string().min(1).max(100),
    role: role.describe('owner (only an owner can make one; keys cannot), admin, reviewer or viewer'),
  }),
);
export const changeUserBody = apiInput('ChangeUserRequest', z.strictObject({ role }));

export const userSchema = apiOutput(
  'User',
  z.object({
    user_id: z.string(),
    org_id: z.string(),
    email: z.string(),
    display_name: z.string(),
    role,
    has_password: z.boolean(),
    invited_by: z.string().describe('user:<id>, api_key:<id> or operator'),
    created_at: z.string(),
    updated_at: z.string(),
    deactivated_at: z.string().nullable().describe('when the person was deactivated (they sign in no more); null while active'),
  }),
);
export const userListSchema = apiOutput('UserList', z.object({ users: z.array(userSchema) }));

export const signInLinkSchema = apiOutput(
  'SignInLink',
  z.object({
    link_id: z.string(),
    delivered_to: z.enum(['issuer', 'user']).describe('issuer: the link is in this answer (a new account’s first link); user: it was sent to the person (the server log stands in for email) and is not in this answer'),
    url: z.string().optional().describe('the one-time sign-in link, shown this once; only when delivered_to is issuer'),
    expires_at: z.string(),
    user: userSchema,
  }),
);

export const sessionSchema = apiOutput(
  'Session',
  z.object({
    session_id: z.string(),
    org_id: z.string(),
    user_id: z.string(),
    method: z.enum(['link', 'password']),
    created_at: z.string(),
    expires_at: z.string(),
    revoked_at: z.string().nullable(),
    status: z.enum(['active', 'revoked', 'expired']),
  }),
);
export const sessionListSchema = apiOutput('SessionList', z.object({ sessions: z.array(sessionSchema) }));
