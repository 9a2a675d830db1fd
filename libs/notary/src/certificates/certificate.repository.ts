import { Batcher, DomainError, SigningKeyRevoked } from '@app/core';
import { EventStore, ReadModelConstraintViolated } from '@app/event-store';
import { CertificateEvent, CertificateState, certificateStream, foldCertificate, FREE_ISSUANCES } from '../domain/certificate.aggregate';
import { revokedKeyRefusal } from '../signing-keys/signing-key-guard';
import { ALLOWANCE_CONSTRAINT, SIGNING_KEY_GUARD } from './certificate.projection';

/** A new certificate's stream: its id, its owner and its first event. */
export interface NewCertificate {
  certificateId: string;
  orgId: string;
  events: CertificateEvent[];
}

export const paywallError = () =>
  new DomainError('notary_paywall', `The free quota of ${FREE_ISSUANCES} certifications and any credits are used up; add credits through /api/payments/notary-credits-checkout`);

/** A refusal of the certificates projection, as its caller sees it; null for any other error. */
const refusalOf = (err: unknown): Error | null =>
  err instanceof ReadModelConstraintViolated && err.constraint === ALLOWANCE_CONSTRAINT ? paywallError() : revokedKeyRefusal(err, SIGNING_KEY_GUARD);

/**
 * Saves certificates through the EventStore port; the certificates projection writes their rows
 * and takes each issuance's slot in the same append, and refuses a certificate whose signing key
 * is revoked by then. Group commit: certificates saved while earlier batches are being written go
 * together in one `appendMany`. A batch the paywall refuses is written again one by one, so only
 * the certificates over their organization's allowance fail; a batch refused for a revoked key
 * (one ring signed it, nearly always with one key) fails whole with SigningKeyRevoked.
 */
export class CertificateRepository {
  private readonly batches: Batcher<NewCertificate, Error | null>;

  constructor(
    private readonly store: EventStore,
    options: { maxBatch?: number; maxInFlight?: number } = {},
  ) {
    this.batches = new Batcher((batch) => this.write(batch), { maxBatch: options.maxBatch ?? 64, maxInFlight: options.maxInFlight ?? 4 });
  }

  /**
   * Resolves once the certificate is committed; rejects with notary_paywall when no issuance is
   * left, and with SigningKeyRevoked when its signing key is revoked.
   */
  async saveNew(certificate: NewCertificate): Promise<void> {
    const failure = await this.batches.add(certificate);
    if (failure) throw failure;
  }

  /** The certificates these ids already name, from their streams (a few at a time). */
  async loadMany(ids: string[]): Promise<Map<string, CertificateState>> {
    const found = new Map<string, CertificateState>();
    for (let i = 0; i < ids.length; i += 16) {
      const slice = ids.slice(i, i + 16);
      const states = await Promise.all(slice.map(async (id) => foldCertificate(await this.store.readStream(certificateStream(id)))));
      states.forEach((state, j) => state && found.set(slice[j], state));
    }
    return found;
  }

  private async write(batch: NewCertificate[]): Promise<(Error | null)[]> {
    if (batch.length === 1) return [await this.writeOne(batch[0])];
    try {
      const outcomes = await this.store.appendMany(batch.map((c) => ({ stream: certificateStream(c.certificateId), events: c.events, expected: 'no_stream' as const })));
      return outcomes.map((o) => (o.status === 'appended' ? null : new Error(`certificate stream ${o.status}: ids are fresh, so this is a fault`)));
    } catch (err) {
      if (!(err instanceof ReadModelConstraintViolated)) throw err;
      if (revokedKeyRefusal(err, SIGNING_KEY_GUARD)) return batch.map(() => new SigningKeyRevoked());
      return Promise.all(batch.map((c) => this.writeOne(c)));
    }
  }

  private async writeOne(c: NewCertificate): Promise<Error | null> {
    try {
      await this.store.append(certificateStream(c.certificateId), c.events, { expectedRevision: 'no_stream' });
      return null;
    } catch (err) {
      const refusal = refusalOf(err);
      if (refusal) return refusal;
      throw err;
    }
  }
}
