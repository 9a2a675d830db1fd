export * from './canonical-json';
export * from './sha256';
export * from './base64url';
export * from './ed25519';
export * from './secret-box';
export * from './key-ring';
