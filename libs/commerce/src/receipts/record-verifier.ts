import type { SignatureCheck } from './signed-record';

/** Checks signatures against the authority's key ring (the notary's signing keys), key status included. */
export class RecordVerifier {
  constructor(readonly check: SignatureCheck) {}
}
