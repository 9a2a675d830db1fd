import { randomBytes } from 'node:crypto';
import { DecryptionError } from '@app/crypto';
import { openResponse, sealResponse } from './sealed-response';

describe('sealed idempotent responses', () => {
  const kek = randomBytes(32);
  const body = { id: 'ep_1', secret: 'whsec_c2VjcmV0LXNob3duLW9uY2U=' };

  it('stores no byte of the response in plain text and opens to the same body', () => {
    const stored = sealResponse(kek, 'org_a', 'key-1', body);
    expect(JSON.stringify(stored)).not.toContain('c2VjcmV0');
    expect(JSON.stringify(stored)).not.toContain('ep_1');
    expect(openResponse(kek, 'org_a', 'key-1', stored)).toEqual(body);
  });

  it('opens only under the same key-encryption key, organization and Idempotency-Key', () => {
    const stored = sealResponse(kek, 'org_a', 'key-1', body);
    expect(() => openResponse(randomBytes(32), 'org_a', 'key-1', stored)).toThrow(DecryptionError);
    expect(() => openResponse(kek, 'org_b', 'key-1', stored)).toThrow(DecryptionError);
    expect(() => openResponse(kek, 'org_a', 'key-2', stored)).toThrow(DecryptionError);
  });
});
