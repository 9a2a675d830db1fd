export * from './domain/certificate';
export * from './signing-keys/signing-keys.migrations';
export * from './signing-keys/signing-key.store';
export * from './certificates/certificates.migrations';
export * from './certificates/certificate.service';
export * from './http/notary.module';
