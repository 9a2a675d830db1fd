import { createWebhookDeduplicator } from './deduplicator';

describe('createWebhookDeduplicator', () => {
  it('says an id is new once, then a duplicate until it expires', () => {
    let now = 1_000;
    const dedupe = createWebhookDeduplicator({ ttlMs: 60_000, now: () => now });
    expect(dedupe.seen('msg_1')).toBe(false);
    expect(dedupe.seen('msg_1')).toBe(true);
    expect(dedupe.seen('msg_2')).toBe(false);
    now += 59_999;
    expect(dedupe.seen('msg_1')).toBe(true);
    now += 1;
    expect(dedupe.seen('msg_1')).toBe(false); // expired, so new again
    expect(dedupe.size).toBe(1); // msg_2 expired too
  });

  it('keeps at most maxEntries ids, dropping the oldest', () => {
    const dedupe = createWebhookDeduplicator({ maxEntries: 3, now: () => 0 });
    for (const id of ['a', 'b', 'c', 'd']) expect(dedupe.seen(id)).toBe(false);
    expect(dedupe.size).toBe(3);
    expect(dedupe.seen('a')).toBe(false); // evicted
    expect(dedupe.seen('d')).toBe(true);
  });

  it('forgets an id whose handling failed, so the retry is processed', () => {
    const dedupe = createWebhookDeduplicator();
    expect(dedupe.seen('msg')).toBe(false);
    dedupe.forget('msg');
    expect(dedupe.seen('msg')).toBe(false);
  });

  it('refuses nonsensical limits', () => {
    expect(() => createWebhookDeduplicator({ ttlMs: 0 })).toThrow(RangeError);
    expect(() => createWebhookDeduplicator({ maxEntries: 0 })).toThrow(RangeError);
  });
});
