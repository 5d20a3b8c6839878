import { generateKeyPairSync } from 'node:crypto';
import forge from 'node-forge';

/**
 * A certificate authority made in the test, so HTTPS receivers have certificates
 * the worker under test trusts through SHIPHOOK_WEBHOOK_CA_FILE — never by turning
 * verification off. Keys come from Node's crypto (fast); forge writes the X.509.
 */
export interface Pem {
  key: string;
  cert: string;
}

const DAY = 86_400_000;

function rsaKeys() {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    privateKey: forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString()),
    publicKey: forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString()),
  };
}

let serial = 1;

function certificate(opts: {
  subject: string;
  keys: ReturnType<typeof rsaKeys>;
  issuer?: { cert: forge.pki.Certificate; key: forge.pki.rsa.PrivateKey };
  ca?: boolean;
  names?: string[];
  notBefore?: Date;
  notAfter?: Date;
}): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = opts.keys.publicKey;
  cert.serialNumber = (serial++).toString(16).padStart(2, '0');
  cert.validity.notBefore = opts.notBefore ?? new Date(Date.now() - DAY);
  cert.validity.notAfter = opts.notAfter ?? new Date(Date.now() + 30 * DAY);
  cert.setSubject([{ name: 'commonName', value: opts.subject }]);
  cert.setIssuer(opts.issuer ? opts.issuer.cert.subject.attributes : [{ name: 'commonName', value: opts.subject }]);
  const extensions: object[] = [{ name: 'basicConstraints', cA: !!opts.ca, critical: true }];
  if (opts.ca) extensions.push({ name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true });
  else {
    extensions.push({ name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true }, { name: 'extKeyUsage', serverAuth: true });
    extensions.push({ name: 'subjectAltName', altNames: (opts.names ?? []).map((n) => (/^\d+\.\d+\.\d+\.\d+$/.test(n) ? { type: 7, ip: n } : { type: 2, value: n })) });
  }
  cert.setExtensions(extensions);
  cert.sign(opts.issuer?.key ?? opts.keys.privateKey, forge.md.sha256.create());
  return cert;
}

export interface TestCa {
  cert: string;
  /** A server certificate signed by this CA. */
  issue(names: string[], validity?: { notBefore?: Date; notAfter?: Date }): Pem;
}

export function createTestCa(name = 'shiphook test CA'): TestCa {
  const keys = rsaKeys();
  const caCert = certificate({ subject: name, keys, ca: true });
  const leafKeys = rsaKeys();
  return {
    cert: forge.pki.certificateToPem(caCert),
    issue(names, validity = {}) {
      const cert = certificate({ subject: names[0]!, keys: leafKeys, issuer: { cert: caCert, key: keys.privateKey }, names, ...validity });
      return { key: forge.pki.privateKeyToPem(leafKeys.privateKey), cert: forge.pki.certificateToPem(cert) };
    },
  };
}

export const expiredValidity = () => ({ notBefore: new Date(Date.now() - 60 * DAY), notAfter: new Date(Date.now() - 30 * DAY) });
