import { Metrics, UNMATCHED_ROUTE } from './metrics';

const lines = async (m: Metrics) => (await m.scrape()).body.split('\n').filter((l) => l && !l.startsWith('#'));

describe('Metrics', () => {
  it('records each metric under its labels, in the Prometheus text format', async () => {
    const m = new Metrics({ defaultMetrics: false });
    m.httpRequest('/api/cdp/authorize', 'POST', 200, 0.004);
    m.httpRequest('/api/cdp/authorize', 'POST', 200, 0.006);
    m.httpRequest(UNMATCHED_ROUTE, 'GET', 404, 0.001);
    m.authorizationDecided('blocked', 'AMOUNT_EXCEEDS_LIMIT', 0.003);
    m.authorizationDecided('authorized', null, 0.002);
    m.webhookDelivery('delivered', 1, 0.2);
    m.webhookDelivery('retry', 2);
    m.eventStoreAppend('append_many', 0.001);
    m.rateLimitRejected('anonymous', 'demo_window');
    m.idempotencyReplayed('/api/cdp/authorize');
    m.idempotencyConflict('/api/cdp/authorize', 'in_progress');
    const out = await lines(m);
    expect(out).toEqual(
      expect.arrayContaining([
        'sigil_http_request_duration_seconds_count{route="/api/cdp/authorize",method="POST",status="200"} 2',
        'sigil_http_request_duration_seconds_bucket{le="0.005",route="/api/cdp/authorize",method="POST",status="200"} 1',
        'sigil_http_request_duration_seconds_count{route="unmatched",method="GET",status="404"} 1',
        'sigil_authorization_decisions_total{decision="blocked",reason_code="AMOUNT_EXCEEDS_LIMIT"} 1',
        'sigil_authorization_decisions_total{decision="authorized",reason_code="none"} 1',
        'sigil_authorization_decision_duration_seconds_count{decision="authorized"} 1',
        'sigil_webhook_deliveries_total{outcome="delivered",attempt="1"} 1',
        'sigil_webhook_deliveries_total{outcome="retry",attempt="2"} 1',
        'sigil_webhook_delivery_latency_seconds_count 1',
        'sigil_event_store_append_duration_seconds_count{method="append_many"} 1',
        'sigil_rate_limit_rejections_total{lane="anonymous",surface="demo_window"} 1',
        'sigil_idempotency_replays_total{route="/api/cdp/authorize"} 1',
        'sigil_idempotency_conflicts_total{route="/api/cdp/authorize",reason="in_progress"} 1',
      ]),
    );
  });

  it('reads the probes when scraped: backlog once per scrape, every lag source, the pool', async () => {
    const m = new Metrics({ defaultMetrics: false });
    let backlogReads = 0;
    m.setWebhookBacklogProbe(async () => (backlogReads++, { due: 3, scheduled: 2, oldestPendingSeconds: 12.5, disabledEndpoints: 1 }));
    m.addProjectionLagProbe(async () => [{ name: 'registry', behind: 4 }]);
    m.addProjectionLagProbe(async () => [{ name: 'webhook-fan-out', behind: 0 }]);
    m.setPoolProbe(() => ({ total: 10, idle: 7, waiting: 2 }));
    const out = await lines(m);
    expect(out).toEqual(
      expect.arrayContaining([
        'sigil_webhook_queue_depth{state="due"} 3',
        'sigil_webhook_queue_depth{state="scheduled"} 2',
        'sigil_webhook_oldest_pending_age_seconds 12.5',
        'sigil_webhook_endpoints_disabled 1',
        'sigil_projection_lag_events{projection="registry"} 4',
        'sigil_projection_lag_events{projection="webhook-fan-out"} 0',
        'sigil_db_pool_waiting 2',
        'sigil_db_pool_connections 10',
        'sigil_db_pool_idle 7',
      ]),
    );
    expect(backlogReads).toBe(1);
  });

  it("reads the pool as it was when the scrape began, not while the scrape's own queries wait for it", async () => {
    const m = new Metrics({ defaultMetrics: false });
    let waiting = 0;
    m.setPoolProbe(() => ({ total: 1, idle: 0, waiting }));
    m.setWebhookBacklogProbe(async () => {
      waiting += 2; // the backlog query queued behind the pool
      await new Promise((r) => setTimeout(r, 5));
      return { due: 0, scheduled: 0, oldestPendingSeconds: 0, disabledEndpoints: 0 };
    });
    expect(await lines(m)).toContain('sigil_db_pool_waiting 0');
  });

  it('still answers when a probe fails or is missing: those gauges have no sample', async () => {
    const m = new Metrics({ defaultMetrics: false });
    m.setWebhookBacklogProbe(async () => {
      throw new Error('database down');
    });
    m.addProjectionLagProbe(async () => {
      throw new Error('database down');
    });
    m.setPoolProbe(() => null);
    const out = await lines(m);
    expect(out.filter((l) => /^sigil_(webhook_queue|webhook_oldest|webhook_endpoints|projection_lag|db_pool)/.test(l))).toEqual([]);
  });

  it('keeps one registry per instance (two apps in one process count apart)', async () => {
    const a = new Metrics({ defaultMetrics: false });
    const b = new Metrics({ defaultMetrics: false });
    a.rateLimitRejected('agent', 'demo_window');
    expect((await lines(a)).some((l) => l.startsWith('sigil_rate_limit_rejections_total'))).toBe(true);
    expect((await lines(b)).some((l) => l.startsWith('sigil_rate_limit_rejections_total'))).toBe(false);
  });

  it('adds the process metrics of prom-client by default', async () => {
    expect((await lines(new Metrics())).some((l) => l.startsWith('process_cpu_user_seconds_total'))).toBe(true);
  });
});
