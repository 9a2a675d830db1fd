import type { Migration } from './migrations';

/**
 * One naming style for event types: `<aggregate>.<what_happened>` in lower snake case, the style
 * of the interface's own lifecycle events (`authorization.requested`, `receipt.issued`).
 * Certificates, registry entries, credits, organizations, API keys and signing keys were first
 * recorded in PascalCase (`CertificateIssued`); these are their new names.
 *
 * The hash of a stored event covers its type as written, and events are never rewritten beyond
 * the name: the rename keeps the old name in `hashed_type`, and the chain check hashes that
 * (`eventHash`), so an old stream reads with the new names and still verifies.
 */
export const RENAMED_EVENT_TYPES: Readonly<Record<string, string>> = {
  CertificateIssued: 'certificate.issued',
  CertificateImported: 'certificate.imported',
  RegistryEntryRegistered: 'registry_entry.registered',
  RegistryEntryEdited: 'registry_entry.edited',
  NotaryCreditsPurchased: 'notary_credits.purchased',
  NotaryCreditsCheckoutFailed: 'notary_credits.checkout_failed',
  OrganizationCreated: 'organization.created',
  ApiKeyCreated: 'api_key.created',
  ApiKeyRevoked: 'api_key.revoked',
  SigningKeyCreated: 'signing_key.created',
  SigningKeyImported: 'signing_key.imported',
  SigningKeyRetired: 'signing_key.retired',
  SigningKeyRevoked: 'signing_key.revoked',
};

/** Renames stored event types by a mapping (old → new), keeping each old name as `hashed_type`. */
export function renameEventTypesSql(mapping: Readonly<Record<string, string>>): string {
  const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;
  const rows = Object.entries(mapping)
    .map(([from, to]) => `(${literal(from)}, ${literal(to)})`)
    .join(', ');
  return `UPDATE events e SET hashed_type = coalesce(e.hashed_type, e.type), type = m.new_type
    FROM (VALUES ${rows}) AS m(old_type, new_type) WHERE e.type = m.old_type;`;
}

export const eventTypeNameMigrations: Migration[] = [
  {
    id: 'event_store_007_event_type_names',
    sql: `
      -- The type an event was hashed with, when a later rename changed its type (else NULL).
      ALTER TABLE events ADD COLUMN IF NOT EXISTS hashed_type text;
      ${renameEventTypesSql(RENAMED_EVENT_TYPES)}
    `,
  },
];
