/**
 * A certificate authority made with the `openssl` command line, and certificates it signs: what
 * an operator's cert-manager or internal CA hands the daemon and Prometheus.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface IssuedFiles {
  cert: string;
  key: string;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: 'pipe' });
}

/** A CA in `dir` (ca.crt, ca.key); returns the path of its certificate. */
export function makeCa(dir: string, name = 'isa-test-ca'): IssuedFiles {
  const files = { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
  openssl(
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
      .concat(['-keyout', files.key, '-out', files.cert, '-days', '2', '-subj', `/CN=${name}`])
      .concat(['-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=keyCertSign']),
    dir,
  );
  return files;
}

/**
 * A certificate for `name`, signed by `ca`: a server's (for 127.0.0.1 and localhost) or a
 * client's. Each call makes a new key and serial, so a rotation is visible.
 */
export function issue(
  dir: string,
  ca: IssuedFiles,
  name: string,
  use: 'server' | 'client',
): IssuedFiles {
  const files = { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
  const csr = join(dir, `${name}.csr`);
  const ext = join(dir, `${name}.ext`);
  writeFileSync(
    ext,
    use === 'server'
      ? 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n'
      : 'extendedKeyUsage=clientAuth\n',
  );
  openssl(
    ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'].concat([
      '-keyout',
      files.key,
      '-out',
      csr,
      '-subj',
      `/CN=${name}`,
    ]),
    dir,
  );
  openssl(
    ['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial'].concat([
      '-out',
      files.cert,
      '-days',
      '1',
      '-extfile',
      ext,
    ]),
    dir,
  );
  return files;
}
