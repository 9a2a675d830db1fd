/**
 * Scopes a key can hold. The spec's four commerce scopes, plus `certificates:write` (issuance),
 * `approvals:manage` (human reviewers of needs_review payments), `users:manage` (people and
 * their console sessions) and `keys:manage` (API keys). A console user's role grants a set of them.
 */
export const SCOPES = [
  'payments:write',
  'payments:read',
  'receipts:read',
  'webhooks:manage',
  'certificates:write',
  'approvals:manage',
  'users:manage',
  'keys:manage',
] as const;

export type Scope = (typeof SCOPES)[number];

/**
 * What an anonymous sandbox key may do: the spec's commerce scopes, certificates and reviews of
 * its own payments; never manage keys or people (`keys:manage`, `users:manage`).
 */
export const SANDBOX_SCOPES: readonly Scope[] = ['payments:write', 'payments:read', 'receipts:read', 'webhooks:manage', 'certificates:write', 'approvals:manage'];

export const isScope = (value: unknown): value is Scope => typeof value === 'string' && (SCOPES as readonly string[]).includes(value);

export function parseScopes(list: string): { scopes: Scope[]; unknown: string[] } {
  const items = [...new Set(list.split(',').map((s) => s.trim()).filter(Boolean))];
  return { scopes: items.filter(isScope), unknown: items.filter((s) => !isScope(s)) };
}

export const missingScopes = (granted: readonly string[], required: readonly Scope[]): Scope[] =>
  required.filter((s) => !granted.includes(s));

/** Scopes a creator may not grant: whoever makes a key (a key with keys:manage, a person) grants only scopes it holds. */
export const scopesBeyond = (creator: readonly string[], requested: readonly Scope[]): Scope[] => requested.filter((s) => !creator.includes(s));
