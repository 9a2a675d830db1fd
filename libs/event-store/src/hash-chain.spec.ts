import { createHash } from 'node:crypto';
import type { RecordedEvent } from './event-store.port';
import { eventHash, isRecordedRename, verifyChain } from './hash-chain';

/** Builds a valid chain of n events for stream s. */
function chain(n: number, s = 'order-1'): RecordedEvent[] {
  const events: RecordedEvent[] = [];
  let prev: string | null = null;
  for (let i = 0; i < n; i++) {
    const base = {
      event_id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      stream_id: s,
      revision: i,
      type: i === 0 ? 'Opened' : 'Changed',
      data: { i, amount_cents: 100 * i, note: 'é😀' },
      metadata: { actor: 'user-1' },
      recorded_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
      prev_hash: prev,
    };
    const hash = eventHash(base);
    events.push({ ...base, hash, global_position: 1000 + i });
    prev = hash;
  }
  return events;
}

describe('eventHash', () => {
  it('is SHA-256 over the RFC 8785 form of the event fields and prev_hash', () => {
    const [e] = chain(1);
    const jcs =
      '{"data":{"amount_cents":0,"i":0,"note":"é😀"},"event_id":"00000000-0000-4000-8000-000000000000","metadata":{"actor":"user-1"},' +
      '"prev_hash":null,"recorded_at":"2026-01-01T00:00:00.000Z","revision":0,"stream_id":"order-1","type":"Opened"}';
    expect(e.hash).toBe('sha256:' + createHash('sha256').update(jcs, 'utf8').digest('hex'));
  });

  it('ignores the global position (assigned by the store) but covers every other field', () => {
    const [e] = chain(1);
    expect(eventHash({ ...e, global_position: 5 } as RecordedEvent)).toBe(e.hash);
    for (const change of [{ revision: 1 }, { type: 'X' }, { data: { i: 1 } }, { metadata: {} }, { recorded_at: '2026-01-01T00:00:01.000Z' }, { stream_id: 'o' }, { prev_hash: 'sha256:00' }]) {
      expect(eventHash({ ...e, ...change })).not.toBe(e.hash);
    }
  });
});

describe('verifyChain', () => {
  it('accepts an intact chain and an empty stream', () => {
    expect(verifyChain('order-1', chain(5))).toEqual({ valid: true, stream_id: 'order-1', events: 5, last_hash: chain(5)[4].hash });
    expect(verifyChain('none', [])).toEqual({ valid: true, stream_id: 'none', events: 0, last_hash: null });
  });

  it('reports an edited event at its own revision', () => {
    const events = chain(5);
    events[2] = { ...events[2], data: { i: 2, amount_cents: 1 } };
    expect(verifyChain('order-1', events)).toMatchObject({ valid: false, broken_at_revision: 2, reason: 'hash_mismatch', actual: events[2].hash });
  });

  it('reports a rehashed forgery at the next link', () => {
    const events = chain(5);
    const forged = { ...events[2], data: { i: 2, amount_cents: 1 } };
    events[2] = { ...forged, hash: eventHash(forged) };
    expect(verifyChain('order-1', events)).toMatchObject({ valid: false, broken_at_revision: 3, reason: 'prev_hash_mismatch' });
  });

  it('reports removed and reordered events', () => {
    const events = chain(5);
    expect(verifyChain('order-1', [events[0], events[2], events[3]])).toMatchObject({ valid: false, broken_at_revision: 2, reason: 'revision_gap' });
    expect(verifyChain('order-1', [events[1], events[0]])).toMatchObject({ valid: false, reason: 'revision_gap' });
    expect(verifyChain('order-1', events.slice(1))).toMatchObject({ valid: false, broken_at_revision: 1, reason: 'revision_gap' });
  });

  it('hashes the old name only for a recorded rename; an edited type kept as hashed_type is reported', () => {
    const renamed = (type: string, hashed_type: string) => {
      const events = chain(3);
      const base = { ...events[1], type: hashed_type };
      events[1] = { ...events[1], type, hashed_type, hash: eventHash(base) };
      events[2] = { ...events[2], prev_hash: events[1].hash, hash: eventHash({ ...events[2], prev_hash: events[1].hash }) };
      return events;
    };
    expect(verifyChain('order-1', renamed('certificate.issued', 'CertificateIssued'))).toMatchObject({ valid: true });
    expect(verifyChain('order-1', renamed('authorization.approved', 'authorization.rejected'))).toMatchObject({
      valid: false,
      broken_at_revision: 1,
      reason: 'hash_mismatch',
    });
    expect(isRecordedRename('A', 'C', { A: 'B', B: 'C' })).toBe(true);
    expect(isRecordedRename('C', 'A', { A: 'B', B: 'C' })).toBe(false);
  });

  it('reports an event whose data can no longer be canonicalized', () => {
    const events = chain(2);
    events[1] = { ...events[1], data: { x: Number.NaN } };
    expect(verifyChain('order-1', events)).toMatchObject({ valid: false, broken_at_revision: 1, reason: 'hash_mismatch', expected: 'uncomputable' });
  });
});
