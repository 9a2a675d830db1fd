import ipaddr from 'ipaddr.js';
import { z } from 'zod';

/** An IPv4 (four decimal parts) or IPv6 address, or a CIDR of either (`10.0.0.0/8`, `fd00::/8`). */
const isAddressOrCidr = (value: string): boolean => {
  const [address, prefix, ...rest] = value.split('/');
  if (rest.length > 0) return false;
  const v4 = ipaddr.IPv4.isValidFourPartDecimal(address);
  if (!v4 && !(address.includes(':') && ipaddr.IPv6.isValid(address))) return false;
  return prefix === undefined || (/^[0-9]{1,3}$/.test(prefix) && Number(prefix) <= (v4 ? 32 : 128));
};

/**
 * All configuration comes from environment variables and is validated once at start.
 * A bad value stops the start with a message naming the variable (ConfigError).
 */
const bool = (name: string, dflt: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'on', 'off', 'yes', 'no'], {
      error: `${name} must be true or false`,
    })
    .optional()
    .transform((v) => (v === undefined ? dflt : ['true', '1', 'on', 'yes'].includes(v)));

const url = (protocols: string[]) =>
  z
    .string()
    .optional()
    .refine(
      (v) => {
        if (v === undefined || v === '') return true;
        try {
          return protocols.includes(new URL(v).protocol);
        } catch {
          return false;
        }
      },
      { message: `must be a URL with scheme ${protocols.map((p) => p.replace(':', '')).join(' or ')}` },
    )
    .transform((v) => (v === '' ? undefined : v));

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  BASE_URL: url(['http:', 'https:']),
  DATABASE_URL: url(['postgres:', 'postgresql:']),
  REDIS_URL: url(['redis:', 'rediss:']),
  KURRENTDB_URL: url(['kurrentdb:', 'esdb:', 'kurrentdb+discover:', 'esdb+discover:']),
  KEY_ENCRYPTION_KEY: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === '' || Buffer.from(v, 'base64').length === 32, {
      message: 'must be 32 bytes, base64 encoded',
    })
    .transform((v) => (v === '' ? undefined : v)),
  DATA_DIR: z.string().min(1).default('./data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** How often each worker rejects escalated authorizations whose window has closed. */
  COMMERCE_SWEEP_INTERVAL_MS: z.coerce.number().int().min(100).max(3_600_000).default(5_000),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: bool('WEBHOOK_ALLOW_PRIVATE_TARGETS', false),
  /** How long a webhook receiver has to answer one attempt. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /** Delays before each retry, ms, comma-separated (default about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h). */
  WEBHOOK_RETRY_SCHEDULE_MS: z
    .string()
    .regex(/^\s*\d{1,10}(\s*,\s*\d{1,10}){0,49}\s*$/, { error: 'must be a comma-separated list of at most 50 delays in ms' })
    .default('5000,300000,1800000,7200000,18000000,36000000,36000000')
    .transform((v) => v.split(',').map((n) => Number(n.trim()))),
  /** An endpoint whose attempts have all failed for this many days is disabled. */
  WEBHOOK_DISABLE_AFTER_DAYS: z.coerce.number().positive().max(365).default(5),
  /** Deliveries processed at once per process. */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(64),
  /** BullMQ key prefix in Redis: deployments sharing one Redis need different prefixes. */
  WEBHOOK_QUEUE_PREFIX: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, { error: 'must be 1..64 of letters, digits, _ and -' }).default('sigil'),
  WORKERS: z.enum(['on', 'off']).default('on'),
  BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).default(1024 * 1024),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(10000),
  /** Requests per minute one authenticated key may make. */
  RATE_LIMIT_KEY_PER_MINUTE: z.coerce.number().int().min(1).default(1200),
  /** How many API keys of one organization may be active (not revoked, not expired) at once. */
  MAX_ACTIVE_API_KEYS: z.coerce.number().int().min(1).max(100_000).default(100),
  /** `off` stops counting (authentication and scopes still apply): for benchmarks and emergencies. */
  RATE_LIMITS: z.enum(['on', 'off']).default('on'),
  /**
   * The reverse proxies in front: how many (0: none; true: one), or which (their addresses or
   * CIDRs, comma-separated). The client IP is the address the outermost trusted proxy saw, counted
   * from the right of X-Forwarded-For. Never "trust every hop": the left of that header is whatever
   * the client sent, and per-IP limits would key on it. With addresses, a client that reaches the
   * service directly is its own socket address, whatever header it sends.
   */
  TRUST_PROXY: z
    .string()
    .optional()
    .transform((v, ctx): number | string[] => {
      if (v === undefined || ['false', 'off', 'no'].includes(v)) return 0;
      if (['true', 'on', 'yes'].includes(v)) return 1;
      if (/^[0-9]{1,2}$/.test(v)) return Number(v);
      const proxies = v.split(',').map((p) => p.trim());
      if (proxies.length > 0 && proxies.every(isAddressOrCidr)) return proxies;
      ctx.addIssue({ code: 'custom', message: 'TRUST_PROXY must be true, false, the number of proxies in front (0..99), or their addresses or CIDRs, comma-separated' });
      return z.NEVER;
    }),
  /** Serve `GET /metrics` on a listener of its own (api and worker); 0 picks a free port. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Bearer token a scrape of `GET /metrics` must carry; alone, it serves metrics on the api's PORT. */
  METRICS_TOKEN: z
    .string()
    .regex(/^[\x21-\x7e]{16,256}$/, { error: 'must be 16..256 printable characters without spaces' })
    .optional(),
});

export type Env = z.infer<typeof envSchema>;

export interface AppConfig extends Omit<Env, 'BASE_URL'> {
  BASE_URL: string;
  /** `embedded` (PGlite in DATA_DIR) unless DATABASE_URL is set. */
  storeMode: 'embedded' | 'postgres';
}

export class ConfigError extends Error {
  constructor(readonly issues: { variable: string; message: string }[]) {
    super(`Invalid configuration: ${issues.map((i) => `${i.variable}: ${i.message}`).join('; ')}`);
    this.name = 'ConfigError';
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  // Treat empty strings as unset, the way shells and compose files commonly pass them.
  const input = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(input);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => ({ variable: String(i.path[0] ?? '?'), message: i.message })));
  }
  const cfg = parsed.data;
  return {
    ...cfg,
    BASE_URL: (cfg.BASE_URL ?? `http://localhost:${cfg.PORT}`).replace(/\/+$/, ''),
    storeMode: cfg.DATABASE_URL ? 'postgres' : 'embedded',
  };
}
