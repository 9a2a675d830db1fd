import { Logger } from '@nestjs/common';
import { openEventStore, OpenedEventStore } from '../open-event-store';
import { ProjectionHost } from './projection-host';
import type { Projection } from './projection-runner';

/** The worker's projection host on PGlite: a projection that cannot apply an event says so. */
describe('ProjectionHost', () => {
  let opened: OpenedEventStore;
  beforeAll(async () => {
    opened = await openEventStore({});
  }, 60_000);
  afterAll(async () => {
    await opened.store.close();
    await opened.db.close();
  });

  it('logs a poison event (naming it) on every retry instead of stalling in silence, and never moves its checkpoint past it', async () => {
    const errors: string[] = [];
    const spy = jest.spyOn(Logger.prototype, 'error').mockImplementation((message: unknown) => void errors.push(String(message)));
    const poison: Projection = {
      name: 'host-poison',
      filter: { streamPrefix: 'host-poison-' },
      apply: () => Promise.reject(new Error('cannot apply this one')),
    };
    const host = new ProjectionHost(opened.db, opened.store, [poison], true);
    const written = await opened.store.append('host-poison-1', [{ type: 'Item', data: {} }]);
    host.onApplicationBootstrap();
    try {
      const deadline = Date.now() + 10_000;
      while (errors.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    } finally {
      await host.beforeApplicationShutdown();
      spy.mockRestore();
    }
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect(errors[0]).toContain(`projection host-poison stopped at event ${written.events[0].event_id}`);
    expect(errors[0]).toContain('cannot apply this one');
    expect(await host.lag()).toEqual([{ name: 'host-poison', behind: 1 }]);
  });
});
