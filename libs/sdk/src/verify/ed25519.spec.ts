import * as fs from 'node:fs';
import * as path from 'node:path';
import { verifyEd25519 } from './ed25519';

// C2SP/wycheproof Ed25519 vectors, read in place: strict RFC 8032, as the server verifies.
const FILE = path.resolve(__dirname, '../../../../../shared/vectors/ed25519/wycheproof_ed25519_test.json');
const hex = (s: string) => new Uint8Array(Buffer.from(s, 'hex'));

describe('verifyEd25519 (noble, zip215: false)', () => {
  it('passes every Wycheproof case', () => {
    const file = JSON.parse(fs.readFileSync(FILE, 'utf8')) as {
      numberOfTests: number;
      testGroups: Array<{ publicKey: { pk: string }; tests: Array<{ tcId: number; msg: string; sig: string; result: string }> }>;
    };
    let checked = 0;
    for (const group of file.testGroups) {
      for (const t of group.tests) {
        expect({ tcId: t.tcId, valid: verifyEd25519(hex(group.publicKey.pk), hex(t.msg), hex(t.sig)) }).toEqual({ tcId: t.tcId, valid: t.result === 'valid' });
        checked++;
      }
    }
    expect(checked).toBe(file.numberOfTests);
  });

  it('rejects wrong lengths without throwing', () => {
    expect(verifyEd25519(new Uint8Array(31), new Uint8Array(1), new Uint8Array(64))).toBe(false);
    expect(verifyEd25519(new Uint8Array(32), new Uint8Array(1), new Uint8Array(63))).toBe(false);
  });
});
