import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import type { Mode } from './tables';

const scryptAsync = promisify(scrypt) as (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer>;
/**
 * OWASP's current scrypt parameters (N = 2^17, r = 8, p = 1): 128 MiB per hash, and
 * deliberately slow (its cost: docs/performance.md). `maxmem` lets exactly that through (OpenSSL's default cap is
 * 32 MiB) and bounds what a stored hash with a larger N could make us allocate.
 */
const SCRYPT = { N: 2 ** 17, r: 8, p: 1, maxmem: 160 * 1024 * 1024 };

/** API keys: a mode marker and 48 random hex digits. Looked up by SHA-256 digest only. */
export function newApiKeyValue(mode: Mode): string {
  return (mode === 'production' ? 'shk_prod_' : 'shk_test_') + randomBytes(24).toString('hex');
}

export function keyDigest(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** Passwords: scrypt (a deliberately slow hash) with a per-password salt. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(password.normalize('NFKC'), salt, 32, SCRYPT);
  return `scrypt$${SCRYPT.N}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, saltB64, hashB64] = stored.split('$');
  const N = Number(n);
  if (scheme !== 'scrypt' || !saltB64 || !hashB64 || !Number.isInteger(N) || N < 2 || N > SCRYPT.N) return false;
  const expected = Buffer.from(hashB64, 'base64');
  const actual = await scryptAsync(password.normalize('NFKC'), Buffer.from(saltB64, 'base64'), expected.length, { ...SCRYPT, N });
  return timingSafeEqual(actual, expected);
}

/** A hash made with weaker parameters than today's: rehash it after the next successful check. */
export function passwordNeedsRehash(stored: string): boolean {
  return stored.split('$')[1] !== String(SCRYPT.N);
}
