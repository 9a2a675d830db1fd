import { systemClock } from '@app/core';
import type { EventStore } from '@app/event-store';
import type { IssueCertificate } from '../domain/certificate.aggregate';
import { IssueCertificateCommand } from '../issue-certificate/issue-certificate.command';
import { IssueCertificateHandler } from '../issue-certificate/issue-certificate.handler';
import type { SigningKeyStore } from '../signing-keys/signing-key.store';
import { CertificateRepository } from './certificate.repository';

/** Specs: issue through the real use case (handler, repository, store) with a process's signing keys. */
export function issuerOn(store: EventStore, keys: SigningKeyStore) {
  const handler = new IssueCertificateHandler(new CertificateRepository(store), { issuer: 'sigil.test', sign: (m) => keys.current.sign(m), refresh: async () => void (await keys.refresh()) }, systemClock);
  return (orgId: string, req: Pick<IssueCertificate, 'content' | 'type' | 'filename' | 'artifact_type'>) => {
    const { content, ...options } = req;
    return handler.execute(new IssueCertificateCommand(orgId, content, options));
  };
}
