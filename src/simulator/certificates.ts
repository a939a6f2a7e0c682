/**
 * Certificates the simulator makes for itself, so that HTTPS (and a check of the certificate an
 * environment presents) can be exercised without files or a network: a certificate authority of
 * its own and a server certificate it signs, with the lifetime and host names asked for. Expired,
 * nearly expired and wrong-host certificates are options, not fixtures that age
 * (docs/simulator.md, "HTTPS").
 *
 * The encoding is `@peculiar/x509`'s: X.509 is too easy to get subtly wrong by hand. It needs a
 * Reflect polyfill loaded before it, hence the first import.
 */
import 'reflect-metadata';
import { KeyObject, randomBytes, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import {
  AuthorityKeyIdentifierExtension,
  BasicConstraintsExtension,
  ExtendedKeyUsage,
  ExtendedKeyUsageExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
  SubjectAlternativeNameExtension,
  SubjectKeyIdentifierExtension,
  X509CertificateGenerator,
  type X509Certificate,
  type JsonGeneralName,
} from '@peculiar/x509';

/** The names a server certificate covers when none are given: the simulator's own default host. */
export const DEFAULT_CERTIFICATE_HOSTS: readonly string[] = ['localhost', '127.0.0.1'];

/** Lifetime of a server certificate when neither `notAfter` nor `validDays` is given. */
export const DEFAULT_VALID_DAYS = 30;

const DAY_MS = 86_400_000;
/** A server certificate starts an hour back by default, so a client's clock skew does not matter. */
const SKEW_MS = 3_600_000;

export interface CertificateOptions {
  /**
   * DNS names and IP addresses the server certificate is issued for (its subject alternative
   * names). Default `localhost` and `127.0.0.1`. Names that do not match the address clients use
   * (e.g. `['elsewhere.invalid']`) make a certificate that fails host name verification.
   */
  hosts?: readonly string[];
  /** Start of the server certificate's validity. Default an hour before now (or before `notAfter`). */
  notBefore?: Date;
  /**
   * End of the server certificate's validity, cut to whole seconds (what X.509 can hold). Wins
   * over `validDays`; a moment in the past makes an expired certificate.
   */
  notAfter?: Date;
  /**
   * Lifetime from now, in days (fractions allowed); negative for a certificate that already
   * expired that long ago. Default `DEFAULT_VALID_DAYS`.
   */
  validDays?: number;
  /** Clock (ms since epoch) that `validDays` and the defaults count from. Default `Date.now`. */
  now?: () => number;
  /**
   * Require mutual TLS: the server asks every client for a certificate signed by its CA and
   * refuses a handshake without one; a client certificate for it is made too (`client`), valid
   * for this many days (fractions allowed; negative: already expired). Absent: no client
   * certificate is asked for.
   */
  clientCertificateDays?: number;
}

/** A client certificate the simulator's CA signed, for a server that requires one. */
export interface ClientCertificate {
  certPem: string;
  /** Its private key (PKCS #8). */
  keyPem: string;
  notAfter: Date;
}

/** What a server needs to present its certificate and what a client needs to trust it, as PEM. */
export interface SimulatorCertificates {
  /** The self-signed certificate authority: what a client adds to its trusted CAs. */
  caPem: string;
  /** The server's certificate, signed by the CA. */
  certPem: string;
  /** The server's private key (PKCS #8). */
  keyPem: string;
  /** The server certificate followed by the CA's: what the server presents. */
  chainPem: string;
  notBefore: Date;
  notAfter: Date;
  hosts: readonly string[];
  /** With `clientCertificateDays`: a client certificate the server accepts. */
  client: ClientCertificate | null;
}

/**
 * Makes a certificate authority and a server certificate it signs (ECDSA P-256, SHA-256), valid
 * as `options` say. The CA itself is valid for a year around the server certificate, so the
 * server certificate's `notAfter` is always the earliest in the chain.
 */
export async function generateCertificates(
  options: CertificateOptions = {},
): Promise<SimulatorCertificates> {
  const nowMs = (options.now ?? Date.now)();
  const hosts = options.hosts ?? DEFAULT_CERTIFICATE_HOSTS;
  if (hosts.length === 0) throw new RangeError('hosts must name at least one host');
  const validity = serverValidity(options, nowMs);
  const caKeys = await generateKeyPair();
  const ca = await issueCertificateAuthority(caKeys, validity, nowMs);
  const serverKeys = await generateKeyPair();
  const server = await issueServerCertificate(ca, caKeys, serverKeys, hosts, validity);
  const client =
    options.clientCertificateDays === undefined
      ? null
      : await issueClientCertificate(ca, caKeys.privateKey, nowMs, options.clientCertificateDays);
  const caPem = ca.toString('pem');
  const certPem = server.toString('pem');
  return {
    caPem: withNewline(caPem),
    certPem: withNewline(certPem),
    keyPem: privateKeyPem(serverKeys),
    chainPem: withNewline(certPem) + withNewline(caPem),
    notBefore: validity.notBefore,
    notAfter: validity.notAfter,
    hosts: [...hosts],
    client,
  };
}

interface Validity {
  notBefore: Date;
  notAfter: Date;
}

/** The server certificate's validity, in whole seconds, from the options and the clock. */
function serverValidity(options: CertificateOptions, nowMs: number): Validity {
  const validDays = options.validDays ?? DEFAULT_VALID_DAYS;
  if (!Number.isFinite(validDays)) throw new RangeError('validDays must be a finite number');
  const notAfter = wholeSeconds(options.notAfter ?? new Date(nowMs + validDays * DAY_MS));
  const notBefore = wholeSeconds(
    options.notBefore ?? new Date(Math.min(nowMs, notAfter.getTime()) - SKEW_MS),
  );
  if (notBefore.getTime() >= notAfter.getTime()) {
    throw new RangeError('notBefore must be earlier than notAfter');
  }
  return { notBefore, notAfter };
}

const SIGNING_ALGORITHM = { name: 'ECDSA', hash: 'SHA-256' };

async function generateKeyPair(): Promise<CryptoKeyPair> {
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  return (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as CryptoKeyPair;
}

function privateKeyPem(keys: CryptoKeyPair): string {
  return withNewline(
    KeyObject.from(keys.privateKey).export({ type: 'pkcs8', format: 'pem' }).toString(),
  );
}

/** The self-signed CA, valid for a year either side of the server certificate and of now. */
async function issueCertificateAuthority(
  caKeys: CryptoKeyPair,
  validity: Validity,
  nowMs: number,
): Promise<X509Certificate> {
  return X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: serialNumber(),
      name: `CN=ISA API simulator CA ${randomBytes(4).toString('hex')}`,
      notBefore: new Date(Math.min(validity.notBefore.getTime(), nowMs) - 365 * DAY_MS),
      notAfter: new Date(Math.max(validity.notAfter.getTime(), nowMs) + 365 * DAY_MS),
      keys: caKeys,
      signingAlgorithm: SIGNING_ALGORITHM,
      extensions: [
        new BasicConstraintsExtension(true, 0, true),
        new KeyUsagesExtension(KeyUsageFlags.keyCertSign | KeyUsageFlags.cRLSign, true),
        await SubjectKeyIdentifierExtension.create(caKeys.publicKey),
      ],
    },
    webcrypto as unknown as Crypto,
  );
}

/** The server certificate (`serverAuth`) the CA signs for `hosts`. */
async function issueServerCertificate(
  ca: X509Certificate,
  caKeys: CryptoKeyPair,
  serverKeys: CryptoKeyPair,
  hosts: readonly string[],
  validity: Validity,
): Promise<X509Certificate> {
  return X509CertificateGenerator.create(
    {
      serialNumber: serialNumber(),
      subject: `CN=${hosts[0]}`,
      issuer: ca.subject,
      notBefore: validity.notBefore,
      notAfter: validity.notAfter,
      publicKey: serverKeys.publicKey,
      signingKey: caKeys.privateKey,
      signingAlgorithm: SIGNING_ALGORITHM,
      extensions: [
        new BasicConstraintsExtension(false, undefined, true),
        new KeyUsagesExtension(KeyUsageFlags.digitalSignature, true),
        new ExtendedKeyUsageExtension([ExtendedKeyUsage.serverAuth]),
        new SubjectAlternativeNameExtension(hosts.map(generalName)),
        await AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
        await SubjectKeyIdentifierExtension.create(serverKeys.publicKey),
      ],
    },
    webcrypto as unknown as Crypto,
  );
}

/** A client certificate (`clientAuth`) the CA signs, ending `validDays` from `nowMs`. */
async function issueClientCertificate(
  ca: X509Certificate,
  caKey: CryptoKey,
  nowMs: number,
  validDays: number,
): Promise<ClientCertificate> {
  const keys = await generateKeyPair();
  const notAfter = wholeSeconds(new Date(nowMs + validDays * DAY_MS));
  const certificate = await X509CertificateGenerator.create(
    {
      serialNumber: serialNumber(),
      subject: 'CN=isa-monitor client',
      issuer: ca.subject,
      notBefore: wholeSeconds(new Date(Math.min(nowMs, notAfter.getTime()) - SKEW_MS)),
      notAfter,
      publicKey: keys.publicKey,
      signingKey: caKey,
      signingAlgorithm: SIGNING_ALGORITHM,
      extensions: [
        new BasicConstraintsExtension(false, undefined, true),
        new KeyUsagesExtension(KeyUsageFlags.digitalSignature, true),
        new ExtendedKeyUsageExtension([ExtendedKeyUsage.clientAuth]),
      ],
    },
    webcrypto as unknown as Crypto,
  );
  return {
    certPem: withNewline(certificate.toString('pem')),
    keyPem: privateKeyPem(keys),
    notAfter,
  };
}

/** An IP address literal goes in as an IP name (clients compare it as one), the rest as DNS. */
function generalName(host: string): JsonGeneralName {
  return { type: isIP(host) === 0 ? 'dns' : 'ip', value: host };
}

/** A random positive serial number of 16 octets: unique per certificate, never negative. */
function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString('hex');
}

function wholeSeconds(date: Date): Date {
  if (Number.isNaN(date.getTime())) throw new RangeError('certificate dates must be valid dates');
  return new Date(Math.floor(date.getTime() / 1000) * 1000);
}

function withNewline(pem: string): string {
  return pem.endsWith('\n') ? pem : `${pem}\n`;
}
