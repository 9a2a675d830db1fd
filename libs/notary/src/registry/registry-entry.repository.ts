import type { EventStore, NewEvent } from '@app/event-store';
import { certificateStream } from '../domain/certificate.aggregate';
import { applyRegistryEntry, RegistryEntryState, registryStream } from '../domain/registry-entry.aggregate';

/**
 * Registry entries through the EventStore port. An entry lives on its certificate's stream or on
 * its own; its owner comes from the stream's first event, the source of truth (never behind the
 * registry projection). Edits are patches, last writer wins, so they append at any revision.
 */
export class RegistryEntryRepository {
  constructor(private readonly store: EventStore) {}

  async load(entryId: string): Promise<RegistryEntryState | null> {
    for (const stream of [certificateStream(entryId), registryStream(entryId)]) {
      const [first] = await this.store.readStream(stream, { limit: 1 });
      if (first) return applyRegistryEntry(null, first);
    }
    return null;
  }

  async saveNew(entryId: string, events: NewEvent[]): Promise<void> {
    await this.store.append(registryStream(entryId), events, { expectedRevision: 'no_stream' });
  }

  async saveEdit(entry: RegistryEntryState, events: NewEvent[]): Promise<void> {
    await this.store.append(entry.stream, events, { expectedRevision: 'any' });
  }
}
