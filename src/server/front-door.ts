/**
 * The daemon's front door (docs/deploy.md, "TLS and basic auth"): the web configuration in force,
 * read again when its file or a file it names changes, and what it asks of every request and
 * connection: the response headers, basic authentication and the client certificate policy. It
 * guards every endpoint alike, the probes and `/-/reload` included.
 */
import { statSync } from 'node:fs';
import type { TLSSocket } from 'node:tls';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import type { ConfigProblem } from '../config/problems.js';
import { BasicAuthVerifier } from './basic-auth.js';
import { readWebConfig, type WebConfig } from './web-config.js';

/**
 * The web configuration of `--web.config.file`, read again at the first connection after a change.
 * exporter-toolkit reads its file at every request and handshake; here a `stat` of the file and of
 * the certificate, key and CA it names decides, so a file rotated in place (cert-manager, Vault)
 * is served from the next connection on, and an unchanged one costs no read.
 */
export class WebConfigSource {
  private signature: string;

  private constructor(
    private readonly file: string,
    private config: WebConfig,
  ) {
    this.signature = signatureOf(file, config);
  }

  /** Reads `file`; its problems, each with its key path, when it cannot be used. */
  static open(
    file: string,
  ): { ok: true; source: WebConfigSource } | { ok: false; problems: ConfigProblem[] } {
    const read = readWebConfig(file);
    if (!read.ok) return read;
    return { ok: true, source: new WebConfigSource(file, read.config) };
  }

  get current(): WebConfig {
    return this.config;
  }

  /** Whether the server must speak TLS: fixed at start, as the listener's kind is. */
  get secure(): boolean {
    return this.config.serverTls !== null;
  }

  /**
   * Reads the file again when it or a file it names changed since the last look; true when a new
   * configuration is in force. A refused file is logged to `logger` and the one in force stays.
   */
  refresh(logger: Logger): boolean {
    const signature = signatureOf(this.file, this.config);
    if (signature === this.signature) return false;
    // Remembered even when refused: a broken file is reported once, not at every connection.
    this.signature = signature;
    const read = readWebConfig(this.file);
    if (!read.ok) {
      for (const problem of read.problems) {
        logger.error(
          { key: problem.path },
          `web configuration: ${problem.path}: ${problem.message}`,
        );
      }
      logger.error({}, 'web configuration refused: the one in force stays');
      return false;
    }
    if ((read.config.serverTls === null) !== (this.config.serverTls === null)) {
      logger.error(
        {},
        'web configuration refused: tls_server_config cannot be added or removed without a restart',
      );
      return false;
    }
    this.config = read.config;
    // What the new file names may differ: watch those from now on.
    this.signature = signatureOf(this.file, this.config);
    logger.info({ users: read.config.users.size, https: this.secure }, 'web configuration read');
    return true;
  }

  /**
   * Whether a TLS client passes the client certificate policy beyond what the handshake checked:
   * a certificate shown for the two "Require" kinds, a verified one if shown for
   * VerifyClientCertIfGiven.
   */
  acceptPeer(socket: TLSSocket): boolean {
    const type = this.config.serverTls?.clientAuthType;
    const shown = Object.keys(socket.getPeerCertificate() ?? {}).length > 0;
    if (type === 'RequireAnyClientCert' || type === 'RequireAndVerifyClientCert') {
      if (!shown) return false;
    }
    if (type === 'VerifyClientCertIfGiven' && shown) return socket.authorized;
    return true;
  }
}

/** The files' identity and change times, with the settings that name them. */
function signatureOf(file: string, config: WebConfig): string {
  const tls = config.serverTls;
  const files = [file, tls?.certFile, tls?.keyFile, tls?.clientCaFile];
  return files
    .map((path) => {
      if (path === undefined || path === null) return '';
      try {
        const info = statSync(path);
        return `${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}`;
      } catch {
        return 'missing';
      }
    })
    .join('|');
}

/**
 * The guard in front of every route: a 401 with `WWW-Authenticate` without the right user and
 * password. Nothing of the credentials is
 * logged, not even the user name (it is sometimes a password typed in the wrong field).
 */
export function frontDoorGuard(source: WebConfigSource, logger: Logger): RequestHandler {
  const verifier = new BasicAuthVerifier();
  return (req: Request, res: Response, next: NextFunction) => {
    const { users } = source.current;
    verifier.verify(users, req.headers.authorization).then(
      (ok) => {
        if (ok) {
          next();
          return;
        }
        logger.debug({ method: req.method, remote: req.socket.remoteAddress }, 'unauthorized');
        res
          .status(401)
          .set('WWW-Authenticate', 'Basic realm="isa-monitor", charset="UTF-8"')
          .type('text/plain')
          .send('Unauthorized\n');
      },
      (err: unknown) => next(err),
    );
  };
}
