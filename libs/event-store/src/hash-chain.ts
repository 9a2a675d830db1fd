import { canonicalJson, sha256Tagged } from '@app/crypto';
import type { ChainVerdict, RecordedEvent } from './event-store.port';
import { RENAMED_EVENT_TYPES } from './sql/event-type-names.migrations';

/**
 * Whether `type` is `hashedType`, or what a recorded rename made of it (through later renames too).
 * Only such a pair may hash the old name: otherwise a row whose type was edited, with the old
 * type written into `hashed_type`, would hash as it did and pass for unaltered.
 */
export function isRecordedRename(hashedType: string, type: string, renames: Readonly<Record<string, string>> = RENAMED_EVENT_TYPES): boolean {
  if (hashedType === type) return true;
  let name = hashedType;
  for (let step = 0; step < 16 && Object.prototype.hasOwnProperty.call(renames, name); step++) {
    name = renames[name];
    if (name === type) return true;
  }
  return false;
}

/** The fields a link hashes: the event as written, its place in the stream, and prev_hash. */
export type HashedFields = Pick<
  RecordedEvent,
  'event_id' | 'stream_id' | 'revision' | 'type' | 'data' | 'metadata' | 'recorded_at' | 'prev_hash' | 'hashed_type'
>;

/**
 * hash = SHA-256 over the RFC 8785 form of the event's fields plus the previous hash; the type as
 * it was written (`hashed_type`, when a rename changed it since).
 */
export function eventHash(e: HashedFields): string {
  return sha256Tagged(
    canonicalJson({
      event_id: e.event_id,
      stream_id: e.stream_id,
      revision: e.revision,
      type: e.hashed_type ?? e.type,
      data: e.data,
      metadata: e.metadata,
      recorded_at: e.recorded_at,
      prev_hash: e.prev_hash,
    }),
  );
}

/** Walks a stream's events in revision order and reports the first broken link. */
export function verifyChain(streamId: string, events: RecordedEvent[]): ChainVerdict {
  let prev: string | null = null;
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    const broken = (reason: 'hash_mismatch' | 'prev_hash_mismatch' | 'revision_gap', expected: string | number | null, actual: string | number | null) =>
      ({ valid: false, stream_id: streamId, events: events.length, broken_at_revision: e.revision, event_id: e.event_id, reason, expected, actual }) as const;
    if (e.revision !== i) return broken('revision_gap', i, e.revision);
    if (e.prev_hash !== prev) return broken('prev_hash_mismatch', prev, e.prev_hash);
    // A hashed_type that no rename explains: the type was edited (the hash would still match).
    if (e.hashed_type != null && !isRecordedRename(e.hashed_type, e.type)) return broken('hash_mismatch', e.hashed_type, e.type);
    let computed: string;
    try {
      computed = eventHash(e);
    } catch {
      computed = 'uncomputable';
    }
    if (computed !== e.hash) return broken('hash_mismatch', computed, e.hash);
    prev = e.hash;
  }
  return { valid: true, stream_id: streamId, events: events.length, last_hash: prev };
}
