export * from './domain/certificate';
export * from './domain/merkle';
export * from './domain/prediction-schemas';
export * from './signing-keys/signing-keys.migrations';
export * from './signing-keys/signing-key.store';
export * from './certificates/certificates.migrations';
export * from './certificates/certificate.service';
export * from './http/notary.module';
