import * as ed from '@noble/ed25519';
import { createHash, KeyObject, randomBytes, randomInt } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  generateEd25519KeyPair,
  privateKeyFromPkcs8,
  publicKeyOf,
  signEd25519,
  verifyEd25519,
} from './ed25519';

// noble's synchronous API needs a SHA-512; node's is the reference one.
ed.hashes.sha512 = (m) => new Uint8Array(createHash('sha512').update(m).digest());

/** The SDK's verifier: noble with strict RFC 8032 rules. A throw (malformed input) is a rejection. */
function nobleVerify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  try {
    return ed.verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
}

function hex(text: string): Buffer {
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(text)) throw new Error(`bad hex in test vector: ${text}`);
  return Buffer.from(text, 'hex');
}

/** PKCS#8 DER of an Ed25519 seed (RFC 8410): fixed 16-byte header + the 32-byte seed. */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const pkcs8FromSeed = (seed: Uint8Array): Buffer => Buffer.concat([PKCS8_ED25519_PREFIX, seed]);

function flipBit(bytes: Uint8Array, bit: number): Buffer {
  const copy = Buffer.from(bytes);
  copy[bit >> 3] ^= 1 << (bit & 7);
  return copy;
}

// ---- Wycheproof (C2SP/wycheproof testvectors_v1), read at runtime; a missing file fails the suite.

interface WycheproofTest {
  tcId: number;
  comment: string;
  flags: string[];
  msg: string;
  sig: string;
  result: 'valid' | 'invalid' | 'acceptable';
}
interface WycheproofGroup {
  publicKey: { pk: string };
  tests: WycheproofTest[];
}
interface WycheproofFile {
  algorithm: string;
  numberOfTests: number;
  testGroups: WycheproofGroup[];
}

const WYCHEPROOF_FILE = path.resolve(__dirname, '../../../../shared/vectors/ed25519/wycheproof_ed25519_test.json');
const wycheproof = JSON.parse(fs.readFileSync(WYCHEPROOF_FILE, 'utf8')) as WycheproofFile;
const groups = wycheproof.testGroups.map((g, i) => ({ index: i, pk: g.publicKey.pk, tests: g.tests }));
const allCases = wycheproof.testGroups.flatMap((g) => g.tests.map((t) => ({ pk: g.publicKey.pk, ...t })));

describe('verifyEd25519: Wycheproof vectors', () => {
  it('loaded the whole file', () => {
    expect(wycheproof.algorithm).toBe('EDDSA');
    expect(groups.length).toBeGreaterThan(0);
    expect(allCases.length).toBe(wycheproof.numberOfTests);
    expect(allCases.length).toBeGreaterThanOrEqual(145);
    expect(new Set(allCases.map((c) => c.tcId)).size).toBe(allCases.length);
    // Ed25519 Wycheproof has no 'acceptable' cases: every case has a definite answer.
    expect(allCases.every((c) => c.result === 'valid' || c.result === 'invalid')).toBe(true);
    expect(allCases.some((c) => c.result === 'valid')).toBe(true);
    expect(allCases.some((c) => c.result === 'invalid')).toBe(true);
  });

  it.each(groups)('group $index: verifyEd25519 and noble (zip215: false) match every result', ({ pk, tests }) => {
    const publicKey = hex(pk);
    const mismatches: string[] = [];
    for (const t of tests) {
      const expected = t.result === 'valid';
      const msg = hex(t.msg);
      const sig = hex(t.sig);
      const ours = verifyEd25519(publicKey, msg, sig);
      const noble = nobleVerify(publicKey, msg, sig);
      if (ours !== expected) mismatches.push(`tcId ${t.tcId} (${t.comment}): verifyEd25519 gave ${ours}`);
      if (noble !== expected) mismatches.push(`tcId ${t.tcId} (${t.comment}): noble gave ${noble}`);
    }
    expect(tests.length).toBeGreaterThan(0);
    expect(mismatches).toEqual([]);
  });

  it('checks every case: each verifier agrees with the expected result on all of them', () => {
    let checked = 0;
    let valid = 0;
    for (const c of allCases) {
      const expected = c.result === 'valid';
      const args = [hex(c.pk), hex(c.msg), hex(c.sig)] as const;
      expect({ tcId: c.tcId, ours: verifyEd25519(...args) }).toEqual({ tcId: c.tcId, ours: expected });
      expect({ tcId: c.tcId, noble: nobleVerify(...args) }).toEqual({ tcId: c.tcId, noble: expected });
      checked++;
      if (expected) valid++;
    }
    expect(checked).toBe(wycheproof.numberOfTests);
    expect(valid).toBeGreaterThan(0);
    expect(checked - valid).toBeGreaterThan(0);
  });

  it('gives the same answers on a second pass (public key cache)', () => {
    for (const c of allCases) {
      expect(verifyEd25519(hex(c.pk), hex(c.msg), hex(c.sig))).toBe(c.result === 'valid');
    }
  });
});

// ---- Interoperability with @noble/ed25519 (the SDK's verifier).

describe('signEd25519 / verifyEd25519 against @noble/ed25519', () => {
  it('200 random messages signed by signEd25519 verify with both verifiers; one flipped bit fails both', () => {
    const { publicKey, privateKeyPkcs8 } = generateEd25519KeyPair();
    const keyObject = privateKeyFromPkcs8(privateKeyPkcs8);
    let checked = 0;
    for (let i = 0; i < 200; i++) {
      const msg = randomBytes(randomInt(0, 1025));
      // Alternate between the PKCS#8 bytes and the KeyObject forms of the private key.
      const sig = signEd25519(i % 2 ? keyObject : privateKeyPkcs8, msg);
      expect(sig.length).toBe(64);
      expect(verifyEd25519(publicKey, msg, sig)).toBe(true);
      expect(nobleVerify(publicKey, msg, sig)).toBe(true);

      const badSig = flipBit(sig, randomInt(0, 512));
      expect(verifyEd25519(publicKey, msg, badSig)).toBe(false);
      expect(nobleVerify(publicKey, msg, badSig)).toBe(false);
      if (msg.length > 0) {
        const badMsg = flipBit(msg, randomInt(0, msg.length * 8));
        expect(verifyEd25519(publicKey, badMsg, sig)).toBe(false);
        expect(nobleVerify(publicKey, badMsg, sig)).toBe(false);
      }
      const otherKey = flipBit(publicKey, randomInt(0, 256));
      expect(verifyEd25519(otherKey, msg, sig)).toBe(false);
      expect(nobleVerify(otherKey, msg, sig)).toBe(false);
      checked++;
    }
    expect(checked).toBe(200);
  });

  it('flipping any single bit of the message or the signature makes both verifiers reject', () => {
    const { publicKey, privateKeyPkcs8 } = generateEd25519KeyPair();
    const msg = randomBytes(48);
    const sig = signEd25519(privateKeyPkcs8, msg);
    expect(verifyEd25519(publicKey, msg, sig)).toBe(true);
    for (let bit = 0; bit < msg.length * 8; bit++) {
      const bad = flipBit(msg, bit);
      expect([bit, verifyEd25519(publicKey, bad, sig), nobleVerify(publicKey, bad, sig)]).toEqual([bit, false, false]);
    }
    for (let bit = 0; bit < 512; bit++) {
      const bad = flipBit(sig, bit);
      expect([bit, verifyEd25519(publicKey, msg, bad), nobleVerify(publicKey, msg, bad)]).toEqual([bit, false, false]);
    }
    // Truncating or extending the message also fails.
    expect(verifyEd25519(publicKey, msg.subarray(1), sig)).toBe(false);
    expect(verifyEd25519(publicKey, Buffer.concat([msg, Buffer.from([0])]), sig)).toBe(false);
  });

  it('a signature made by noble over a random secret key verifies with verifyEd25519', () => {
    for (let i = 0; i < 50; i++) {
      const secretKey = ed.utils.randomSecretKey();
      const publicKey = ed.getPublicKey(secretKey);
      const msg = randomBytes(randomInt(0, 1025));
      const sig = ed.sign(msg, secretKey);
      expect(verifyEd25519(publicKey, msg, sig)).toBe(true);
      expect(verifyEd25519(publicKey, flipBit(msg.length ? msg : Buffer.alloc(1), 0), sig)).toBe(false);
      expect(verifyEd25519(publicKey, msg, flipBit(sig, randomInt(0, 512)))).toBe(false);
    }
  });

  it('produces byte-identical keys and (deterministic) signatures to noble for the same seed', () => {
    for (let i = 0; i < 20; i++) {
      const seed = ed.utils.randomSecretKey();
      const pkcs8 = pkcs8FromSeed(seed);
      const key = privateKeyFromPkcs8(pkcs8);
      expect(Buffer.from(publicKeyOf(key)).equals(Buffer.from(ed.getPublicKey(seed)))).toBe(true);
      const msg = randomBytes(randomInt(0, 300));
      const ours = signEd25519(pkcs8, msg);
      expect(ours.equals(Buffer.from(ed.sign(msg, seed)))).toBe(true);
      expect(signEd25519(key, msg).equals(ours)).toBe(true);
    }
  });

  it('matches the RFC 8032 §7.1 TEST 1 and TEST 3 known answers', () => {
    const cases = [
      {
        seed: '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
        pk: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
        msg: '',
        sig:
          'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
      },
      {
        seed: 'c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7',
        pk: 'fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025',
        msg: 'af82',
        sig:
          '6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a',
      },
    ];
    for (const c of cases) {
      const key = privateKeyFromPkcs8(pkcs8FromSeed(hex(c.seed)));
      expect(publicKeyOf(key).toString('hex')).toBe(c.pk);
      expect(signEd25519(key, hex(c.msg)).toString('hex')).toBe(c.sig);
      expect(verifyEd25519(hex(c.pk), hex(c.msg), hex(c.sig))).toBe(true);
    }
  });
});

// ---- Key generation and malformed input.

describe('generateEd25519KeyPair', () => {
  it('returns a raw 32-byte public key and a PKCS#8 private key that belong together', () => {
    const pair = generateEd25519KeyPair();
    expect(pair.publicKey.length).toBe(32);
    expect(pair.privateKeyPkcs8.length).toBe(48);
    expect(pair.privateKeyPkcs8.subarray(0, 16).equals(PKCS8_ED25519_PREFIX)).toBe(true);
    const key = privateKeyFromPkcs8(pair.privateKeyPkcs8);
    expect(key).toBeInstanceOf(KeyObject);
    expect(key.asymmetricKeyType).toBe('ed25519');
    expect(publicKeyOf(key).equals(pair.publicKey)).toBe(true);
    expect(Buffer.from(ed.getPublicKey(pair.privateKeyPkcs8.subarray(16))).equals(pair.publicKey)).toBe(true);
  });

  it('generates a fresh key each time', () => {
    const a = generateEd25519KeyPair();
    const b = generateEd25519KeyPair();
    expect(a.publicKey.equals(b.publicKey)).toBe(false);
    expect(a.privateKeyPkcs8.equals(b.privateKeyPkcs8)).toBe(false);
  });

  it('privateKeyFromPkcs8 rejects bytes that are not PKCS#8', () => {
    expect(() => privateKeyFromPkcs8(randomBytes(48))).toThrow();
    expect(() => privateKeyFromPkcs8(new Uint8Array(0))).toThrow();
  });
});

describe('verifyEd25519: malformed input returns false and never throws', () => {
  const { publicKey, privateKeyPkcs8 } = generateEd25519KeyPair();
  const msg = Buffer.from('message');
  const sig = signEd25519(privateKeyPkcs8, msg);

  it('accepts plain Uint8Arrays as well as Buffers', () => {
    expect(verifyEd25519(new Uint8Array(publicKey), new Uint8Array(msg), new Uint8Array(sig))).toBe(true);
  });

  it.each([0, 1, 31, 33, 64])('rejects a %i-byte public key', (n) => {
    const key = Buffer.alloc(n);
    publicKey.copy(key);
    expect(() => verifyEd25519(key, msg, sig)).not.toThrow();
    expect(verifyEd25519(key, msg, sig)).toBe(false);
  });

  it.each([0, 1, 32, 63, 65, 128])('rejects a %i-byte signature', (n) => {
    const s = Buffer.alloc(n);
    sig.copy(s);
    expect(() => verifyEd25519(publicKey, msg, s)).not.toThrow();
    expect(verifyEd25519(publicKey, msg, s)).toBe(false);
  });

  it('rejects public keys that are not valid point encodings', () => {
    // Find y values with no x on the curve: noble refuses to decode them.
    const invalid: Buffer[] = [];
    for (let y = 2; invalid.length < 5 && y < 1000; y++) {
      const enc = Buffer.alloc(32);
      enc.writeUInt16LE(y, 0);
      let decodes = true;
      try {
        ed.Point.fromBytes(enc);
      } catch {
        decodes = false;
      }
      if (!decodes) invalid.push(enc);
    }
    expect(invalid.length).toBe(5);
    // Non-canonical: y = p (2^255 - 19) encodes y = 0, and y = 2^255 - 1 is out of range.
    const yEqualsP = Buffer.alloc(32, 0xff);
    yEqualsP[0] = 0xed;
    yEqualsP[31] = 0x7f;
    const yAllOnes = Buffer.alloc(32, 0xff);
    for (const key of [...invalid, yEqualsP, yAllOnes]) {
      for (let pass = 0; pass < 2; pass++) {
        expect(() => verifyEd25519(key, msg, sig)).not.toThrow();
        expect(verifyEd25519(key, msg, sig)).toBe(false);
      }
    }
  });

  it('rejects an all-zero signature, and a signature with S >= L', () => {
    expect(verifyEd25519(publicKey, msg, Buffer.alloc(64))).toBe(false);
    const highS = Buffer.from(sig);
    highS.fill(0xff, 32); // S = 2^256 - 1, far above the group order
    expect(verifyEd25519(publicKey, msg, highS)).toBe(false);
    // S + L: the classic malleability, must be rejected under RFC 8032.
    const L = (1n << 252n) + 27742317777372353535851937790883648493n;
    const s = BigInt('0x' + Buffer.from(sig.subarray(32)).reverse().toString('hex'));
    const malleated = Buffer.from(sig);
    const sPlusL = Buffer.from((s + L).toString(16).padStart(64, '0'), 'hex').reverse();
    sPlusL.copy(malleated, 32);
    expect(s < L && s + L < 1n << 256n).toBe(true);
    expect(verifyEd25519(publicKey, msg, malleated)).toBe(false);
    expect(nobleVerify(publicKey, msg, malleated)).toBe(false);
  });

  it('rejects a valid signature under a different key', () => {
    const other = generateEd25519KeyPair();
    expect(verifyEd25519(other.publicKey, msg, sig)).toBe(false);
  });
});
