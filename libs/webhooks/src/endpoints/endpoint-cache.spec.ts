import type { SqlDatabase } from '@app/event-store';
import { EndpointCache, secretsAt, SendTarget } from './endpoint-cache';
import { ENDPOINTS_CHANGED_CHANNEL, EndpointChanges } from './endpoint-changes.repository';

const target = (id: string, over: Partial<SendTarget> = {}): SendTarget => ({
  id,
  org_id: 'org_1',
  url: 'https://example.com/hook',
  enabled: true,
  deleted: false,
  secrets: [{ secret: 'whsec_new', expiresAt: null }],
  ...over,
});

/** Just the LISTEN side of a database: what the cache uses. */
function fakeDb() {
  const listeners = new Map<string, Set<() => void>>();
  const db = {
    listen: async (channel: string, cb: () => void) => {
      listeners.set(channel, (listeners.get(channel) ?? new Set()).add(cb));
      return async () => void listeners.get(channel)?.delete(cb);
    },
  } as unknown as SqlDatabase;
  return { db: new EndpointChanges(db), notify: (channel: string) => listeners.get(channel)?.forEach((cb) => cb()) };
}

describe('EndpointCache', () => {
  let clock = 0;
  let loads: string[];
  let current: Map<string, SendTarget>;
  const load = async (id: string) => {
    loads.push(id);
    return current.get(id) ?? null;
  };
  beforeEach(() => {
    clock = 1_000;
    loads = [];
    current = new Map([['ep_1', target('ep_1')]]);
  });

  it('loads an endpoint once, and shares a load in flight', async () => {
    const { db } = fakeDb();
    const sut = new EndpointCache(db, load, 5_000, () => clock);
    const [a, b] = await Promise.all([sut.get('ep_1'), sut.get('ep_1')]);
    expect(a).toEqual(target('ep_1'));
    expect(b).toBe(a);
    expect(await sut.get('ep_1')).toBe(a);
    expect(loads).toEqual(['ep_1']);
  });

  it('forgets everything when an endpoint change is announced', async () => {
    const { db, notify } = fakeDb();
    const sut = new EndpointCache(db, load, 5_000, () => clock);
    await sut.start();
    await sut.get('ep_1');
    current.set('ep_1', target('ep_1', { enabled: false }));
    notify('some_other_channel');
    expect((await sut.get('ep_1'))!.enabled).toBe(true);
    notify(ENDPOINTS_CHANGED_CHANNEL);
    expect((await sut.get('ep_1'))!.enabled).toBe(false);
    expect(loads).toEqual(['ep_1', 'ep_1']);
    await sut.stop();
  });

  it('reloads after the TTL even when no announcement arrives (a lost notification)', async () => {
    const { db } = fakeDb();
    const sut = new EndpointCache(db, load, 5_000, () => clock);
    await sut.get('ep_1');
    current.set('ep_1', target('ep_1', { url: 'https://example.com/moved' }));
    clock += 4_999;
    expect((await sut.get('ep_1'))!.url).toBe('https://example.com/hook');
    clock += 1;
    expect((await sut.get('ep_1'))!.url).toBe('https://example.com/moved');
  });

  it('does not keep a failed load', async () => {
    const { db } = fakeDb();
    let fail = true;
    const sut = new EndpointCache(db, async (id) => {
      if (fail) throw new Error('database down');
      return load(id);
    });
    await expect(sut.get('ep_1')).rejects.toThrow('database down');
    fail = false;
    expect(await sut.get('ep_1')).toEqual(target('ep_1'));
  });
});

describe('secretsAt', () => {
  it('keeps a rotated-out secret signing until it expires, newest first', () => {
    const t = target('ep_1', { secrets: [{ secret: 'whsec_new', expiresAt: null }, { secret: 'whsec_old', expiresAt: 10_000 }] });
    expect(secretsAt(t, new Date(9_999))).toEqual(['whsec_new', 'whsec_old']);
    expect(secretsAt(t, new Date(10_000))).toEqual(['whsec_new']);
  });
});
