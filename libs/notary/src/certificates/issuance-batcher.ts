import { AppError } from '@app/core';
import { AppendFollowUp, ManyAppendFollowUp, NewEvent, SqlDatabase, SqlEventStore, sqlState } from '@app/event-store';
import type { SignedManifest } from '../domain/certificate';

export const FREE_ISSUANCES = 3;

/** Raised by `notary_take_issuance` (credits migrations) when the organization has no issuance left. */
export const PAYWALL_SQLSTATE = 'SG402';

export const paywallError = () =>
  new AppError('notary_paywall', `The free quota of ${FREE_ISSUANCES} certifications and any credits are used up; add credits through /api/payments/notary-credits-checkout`, 402);

/** One issuance to write: its stream's first event and the certificates row. */
export interface Issuance {
  orgId: string;
  stream: string;
  events: NewEvent[];
  manifest: SignedManifest;
}

interface Pending extends Issuance {
  resolve: () => void;
  reject: (err: unknown) => void;
}

export interface IssuanceBatcherOptions {
  /** Batches being written at once; the others wait and grow meanwhile. */
  maxInFlight?: number;
  maxBatch?: number;
}

/**
 * Group commit for issuances. Issuances that arrive while earlier ones are being written wait
 * and go together: one transaction takes every paywall slot (organizations in one order, so
 * batches never deadlock), appends every granted certificate's stream in one statement
 * (appendManyIn) with the certificates rows, and commits once. An issuance alone is the single
 * statement of `issuanceRow`. Either way each certificate's event, slot and row commit together;
 * a batch that fails fails as a whole and nothing of it is written.
 */
export class IssuanceBatcher {
  private queue: Pending[] = [];
  private inFlight = 0;
  private scheduled = false;
  private readonly maxInFlight: number;
  private readonly maxBatch: number;

  constructor(
    private readonly db: SqlDatabase,
    private readonly store: SqlEventStore,
    options: IssuanceBatcherOptions = {},
  ) {
    this.maxInFlight = options.maxInFlight ?? 4;
    this.maxBatch = options.maxBatch ?? 64;
  }

  /** Resolves once the issuance is committed; rejects with notary_paywall when no slot is left. */
  write(issuance: Issuance): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ ...issuance, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.flush();
        });
      }
    });
  }

  private flush(): void {
    while (this.queue.length > 0 && this.inFlight < this.maxInFlight) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.inFlight++;
      void this.run(batch).finally(() => {
        this.inFlight--;
        this.flush();
      });
    }
  }

  private async run(batch: Pending[]): Promise<void> {
    if (batch.length === 1) {
      const [one] = batch;
      try {
        await this.store.append(one.stream, one.events, { expectedRevision: 'no_stream', followUp: issuanceRow(one.orgId, one.manifest) });
        one.resolve();
      } catch (err) {
        one.reject(sqlState(err) === PAYWALL_SQLSTATE ? paywallError() : err);
      }
      return;
    }
    let granted: boolean[];
    try {
      granted = await this.db.transaction(async (tx) => {
        const [{ slots }] = await tx.query<{ slots: boolean[] }>('SELECT notary_take_issuances($1::text[], $2::integer) AS slots', [batch.map((b) => b.orgId), FREE_ISSUANCES], {
          name: 'notary_take_issuances',
        });
        const ok = batch.filter((_, i) => slots[i]);
        if (ok.length > 0) {
          const outcomes = await this.store.appendManyIn(
            tx,
            ok.map((b) => ({ stream: b.stream, events: b.events, expected: 'no_stream' as const })),
            issuanceRows(ok),
          );
          // New streams with fresh ids: anything but `appended` is a fault, and undoes the batch.
          const bad = outcomes.find((o) => o.status !== 'appended');
          if (bad) throw bad.status === 'wrong_expected_version' ? bad.error : new Error('issuance replayed an existing event');
        }
        return slots;
      });
    } catch (err) {
      for (const b of batch) b.reject(err);
      return;
    }
    batch.forEach((b, i) => (granted[i] ? b.resolve() : b.reject(paywallError())));
  }
}

const rowOf = (orgId: string, m: SignedManifest) => {
  const p = m.payload;
  return { org: orgId, id: p.certification_id, schema: p.schema_version, payload: JSON.stringify(p), sig: m.signature.value, key: m.signature.key_id, hash: p.dataset_hash, at: p.timestamp };
};

/**
 * What an issuance writes beside its event, in the append's own statement: the organization's
 * issuance slot (free quota plus credits; the row lock serializes the organization's issuances,
 * so no race can overrun it; none left aborts the whole statement with SG402) and the
 * certificates row. Equivalent to applyCertificateEvent for a CertificateIssued.
 */
export function issuanceRow(orgId: string, manifest: SignedManifest): AppendFollowUp {
  const r = rowOf(orgId, manifest);
  return {
    name: 'notary_issue',
    sql: `INSERT INTO certificates (certificate_id, org_id, schema_version, payload, signature, key_id, dataset_hash, issued_at, imported)
          SELECT :1::uuid, :2::text, :3::text, :4::json, :5::text, :6::uuid, :7::text, :8::timestamptz, false FROM appended
          WHERE CASE WHEN status = 'appended' THEN notary_take_issuance(:2::text, :9::integer) ELSE false END`,
    params: [r.id, r.org, r.schema, r.payload, r.sig, r.key, r.hash, r.at, FREE_ISSUANCES],
  };
}

/** The certificates rows of a batch (its slots already taken), written by the appendManyIn statement. */
function issuanceRows(batch: Issuance[]): ManyAppendFollowUp {
  return {
    name: 'notary_issue_many',
    sql: `INSERT INTO certificates (certificate_id, org_id, schema_version, payload, signature, key_id, dataset_hash, issued_at, imported)
          SELECT x.id::uuid, x.org, x.schema, x.payload::json, x.sig, x.key::uuid, x.hash, x.at::timestamptz, false
          FROM json_to_recordset(:1::json) AS x(ord int, id text, org text, schema text, payload text, sig text, key text, hash text, at text)
          JOIN appended a ON a.ord = x.ord AND a.status = 'appended'`,
    // `ord`: the append's place in the batch (1-based), as appendManyIn numbers them.
    params: [JSON.stringify(batch.map((b, i) => ({ ord: i + 1, ...rowOf(b.orgId, b.manifest) })))],
  };
}
