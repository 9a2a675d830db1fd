/**
 * Lanes, in order of precedence: authenticated (a valid bearer key) > agent (a valid
 * X-Agent-DID within the per-IP rotation cap) > anonymous. The agent lane's capability scope
 * equals the anonymous lane's: it only gets larger buckets on the public surfaces.
 */
export type Lane = 'anonymous' | 'agent' | 'authenticated';
export const LANES: Lane[] = ['anonymous', 'agent', 'authenticated'];

export type DidStatus = 'did_accepted' | `did_rejected:${string}` | 'did_downgraded:per_ip_rotation_cap';

/** Per-IP cap on distinct DIDs in a window; DIDs already counted keep their lane. */
export const DID_ROTATION = { max: 10, windowSeconds: 3600 } as const;

export interface BucketRule {
  limit: number;
  windowSeconds: number;
}

/**
 * The spec's per-endpoint throttle table. A bucket is counted per IP (anonymous), per DID
 * hash (agent), per key (authenticated), or once for everybody (`global`).
 */
export interface BucketPolicy {
  anonymous: BucketRule | null;
  agent: BucketRule | null;
  /** null: authenticated callers use their per-key limit instead. */
  authenticated: BucketRule | null;
  global?: BucketRule;
  /** Count per client IP in every lane, keys included (the spec's "strict per-IP" limits). */
  perIp?: boolean;
  /** Redis down: `open` serves without counting, `closed` answers 503. */
  onStoreDown: 'open' | 'closed';
}

/** A public per-minute surface: per IP for anonymous callers, 4× that per DID for agents, keys on their own limit; served uncounted when Redis is down. */
const publicPerMinute = (anonymousLimit: number) =>
  ({
    anonymous: { limit: anonymousLimit, windowSeconds: 60 },
    agent: { limit: 4 * anonymousLimit, windowSeconds: 60 },
    authenticated: null,
    onStoreDown: 'open',
  }) satisfies BucketPolicy;

/**
 * Agent-lane values: the spec gives `demo_window` 60, `public_verify_window` 240 and
 * `sandbox_key_daily` 30. Its other public per-minute surfaces (certificate fetch, registry
 * list, badge data) get 4× their anonymous value, the ratio `public_verify_window` has.
 * Each surface is its own bucket: certificate fetches never use up verification, and so on.
 */
export const BUCKETS = {
  // Payment verify and verification: POST /api/verify, POST /api/verify/hash, GET /api/verify/{id},
  // GET /api/predictions/proof, POST /api/cdp/receipts/verify.
  public_verify_window: publicPerMinute(60),
  // Certificate fetch: GET /api/certificates/{id} (and /signed-payload, /download),
  // GET /api/cert/{id}/manifest, the GET /verify/{id} page.
  certificate_fetch_window: publicPerMinute(60),
  // Registry list: GET /v1/registry.
  registry_list_window: publicPerMinute(60),
  // Badge data (GET /api/badge/{certificate_id}).
  badge_window: publicPerMinute(300),
  // Decision ledger demo.
  demo_window: {
    anonymous: { limit: 10, windowSeconds: 900 },
    agent: { limit: 60, windowSeconds: 900 },
    authenticated: null,
    onStoreDown: 'open',
  },
  // Sandbox dataset generation (a synthetic dataset certified on a fresh sandbox organization):
  // the spec's 10 per 24 h per IP; agents 4×, as the other public surfaces.
  sandbox_dataset_daily: {
    anonymous: { limit: 10, windowSeconds: 86_400 },
    agent: { limit: 40, windowSeconds: 86_400 },
    authenticated: { limit: 40, windowSeconds: 86_400 },
    onStoreDown: 'closed',
  },
  // Ephemeral sandbox key mint: per caller per day, and 60 a minute for everybody.
  sandbox_key_daily: {
    anonymous: { limit: 3, windowSeconds: 86_400 },
    agent: { limit: 30, windowSeconds: 86_400 },
    authenticated: { limit: 30, windowSeconds: 86_400 },
    global: { limit: 60, windowSeconds: 60 },
    onStoreDown: 'closed',
  },
  // Certificate issuance: the spec's strict per-IP limit (its number is not given; ours is 120/min).
  notary_issue: {
    anonymous: null,
    agent: null,
    authenticated: { limit: 120, windowSeconds: 60 },
    perIp: true,
    onStoreDown: 'open',
  },
} satisfies Record<string, BucketPolicy>;

export type BucketName = keyof typeof BUCKETS;

/** The public read surfaces, each counted on its own; the quota document reports each one. */
export const PUBLIC_READ_BUCKETS = ['public_verify_window', 'certificate_fetch_window', 'registry_list_window', 'badge_window'] as const satisfies readonly BucketName[];

/** The rule that applies to a lane on a bucket; authenticated callers fall back to their key's limit. */
export function ruleFor(bucket: BucketName, lane: Lane, perKey: BucketRule): BucketRule | null {
  const policy: BucketPolicy = BUCKETS[bucket];
  if (lane === 'authenticated') return policy.authenticated ?? perKey;
  return policy[lane];
}
