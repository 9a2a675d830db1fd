import { randomBytes, randomUUID } from 'node:crypto';

export const newUuid = (): string => randomUUID();

/** A prefixed random id such as `auth_3f9a…`; `bytes` of CSPRNG output, hex encoded. */
export const newPrefixedId = (prefix: string, bytes = 16): string => `${prefix}_${randomBytes(bytes).toString('hex')}`;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID_RE.test(value);
