/**
 * `environments[].ca_file`: certificate authorities an environment's requests trust in addition to
 * the system's (docs/configuration.md, "Extra trust"). The file is read and every certificate in it
 * parsed while the configuration loads, so a wrong path or a file of something else is a
 * configuration problem with its key path, not a TLS failure at the first run.
 */
import { X509Certificate } from 'node:crypto';
import { describeFileError } from './secrets.js';

export type TrustResolution = { ok: true; certificates: string[] } | { ok: false; message: string };

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----\r?\n[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * Reads a PEM file of certificate authorities: one or more `CERTIFICATE` blocks, each of which
 * must parse (other blocks, such as comments or keys, are ignored). Returns the blocks, in order.
 * The path is not a secret, so messages name it.
 */
export function readCertificateAuthorities(
  path: string,
  readFile: (path: string) => string,
): TrustResolution {
  let text: string;
  try {
    text = readFile(path);
  } catch (err) {
    return { ok: false, message: `cannot read ${path}: ${describeFileError(err)}` };
  }
  const certificates = text.match(PEM_CERTIFICATE) ?? [];
  if (certificates.length === 0) {
    return {
      ok: false,
      message: `file ${path} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`,
    };
  }
  for (const [index, pem] of certificates.entries()) {
    try {
      new X509Certificate(pem);
    } catch {
      return {
        ok: false,
        message: `file ${path}: certificate ${index + 1} of ${certificates.length} is not a valid X.509 certificate`,
      };
    }
  }
  return { ok: true, certificates };
}
