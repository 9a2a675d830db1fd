import { SCOPES, type Scope } from '@app/access';

/**
 * A person's role in their organization, and the API scopes it grants: the console checks the
 * same scopes the API's keys are checked against, so a page and its endpoint refuse alike.
 */
export const ROLES = ['owner', 'admin', 'reviewer', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const isRole = (value: unknown): value is Role => typeof value === 'string' && (ROLES as readonly string[]).includes(value);

const READ: Scope[] = ['payments:read', 'receipts:read'];

export const ROLE_SCOPES: Readonly<Record<Role, readonly Scope[]>> = Object.freeze({
  owner: [...SCOPES],
  admin: [...SCOPES],
  reviewer: [...READ, 'approvals:manage'],
  viewer: READ,
});

export const scopesOf = (role: Role): readonly Scope[] => ROLE_SCOPES[role];
