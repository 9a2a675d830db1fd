import { DomainError } from '@app/core';
import type { ArtifactType } from './artifact-types';
import { CERTIFICATE_IMPORTED, CERTIFICATE_ISSUED, CertificateIssuedData } from './certificate.aggregate';

/**
 * A registry entry: a certificate's listing (its stream is the certificate's) or an artifact
 * listed without a certificate (its own `registry-<id>` stream, opened by RegistryEntryRegistered).
 * Its owner edits it with RegistryEntryEdited; anyone else is told it does not exist.
 */
export const REGISTRY_ENTRY_REGISTERED = 'registry_entry.registered';
export const REGISTRY_ENTRY_EDITED = 'registry_entry.edited';
export const registryStream = (id: string) => `registry-${id}`;

/** An artifact listed without a certificate (status `unverified`). */
export interface RegistryEntryRegistered {
  entry_id: string;
  org_id: string;
  title: string;
  summary: string | null;
  artifact_type: ArtifactType;
  industry: string | null;
  tags: string[];
  visibility: 'public' | 'private';
}

/** Edits an owner makes to its entry; absent fields stay as they were. */
export interface RegistryEntryEdited {
  entry_id: string;
  title?: string;
  summary?: string | null;
  industry?: string | null;
  tags?: string[];
  visibility?: 'public' | 'private';
}

export interface RegistryEntryState {
  entry_id: string;
  org_id: string;
  /** The stream the entry's events go to: its certificate's, or its own. */
  stream: string;
  revision: number;
}

/** Folds an entry's stream: the first event names the owner; edits change only the listing. */
export function applyRegistryEntry(state: RegistryEntryState | null, event: { type: string; data: unknown; stream_id: string }): RegistryEntryState {
  if (state === null) {
    if (event.type === CERTIFICATE_ISSUED || event.type === CERTIFICATE_IMPORTED) {
      const d = event.data as CertificateIssuedData;
      return { entry_id: d.manifest.payload.certification_id, org_id: d.org_id, stream: event.stream_id, revision: 0 };
    }
    if (event.type === REGISTRY_ENTRY_REGISTERED) {
      const d = event.data as RegistryEntryRegistered;
      return { entry_id: d.entry_id, org_id: d.org_id, stream: event.stream_id, revision: 0 };
    }
    throw new DomainError('illegal_transition', `${event.type} cannot open a registry entry`, { event: event.type });
  }
  if (event.type !== REGISTRY_ENTRY_EDITED) throw new DomainError('illegal_transition', `${event.type} after the entry was listed`, { event: event.type });
  return { ...state, revision: state.revision + 1 };
}

export function registerEntry(entryId: string, orgId: string, entry: Omit<RegistryEntryRegistered, 'entry_id' | 'org_id'>) {
  const data: RegistryEntryRegistered = { entry_id: entryId, org_id: orgId, ...entry };
  return [{ type: REGISTRY_ENTRY_REGISTERED, data }];
}

/** The owner's edit; a missing entry and another organization's answer alike (not_found). */
export function editEntry(state: RegistryEntryState | null, entryId: string, orgId: string, changes: Omit<RegistryEntryEdited, 'entry_id'>) {
  if (state === null || state.org_id !== orgId) throw new DomainError('not_found', `registry entry ${entryId} not found`);
  const data: RegistryEntryEdited = { entry_id: entryId, ...changes };
  return [{ type: REGISTRY_ENTRY_EDITED, data }];
}
