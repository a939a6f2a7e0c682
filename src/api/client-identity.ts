/**
 * An environment's client certificate (`client_cert_file`, `client_key_file`; docs/configuration.md,
 * "Client certificates"), kept current while the daemon runs: cert-manager and Vault agents rotate
 * these files in place, so the pair is read again when either file changes on disk, and the next
 * new connection presents the new certificate. Connections already open keep the one they were
 * made with, as any TLS client does.
 *
 * The key is a secret like the API key: it is held here and handed only to TLS; no message of this
 * module contains it.
 */
import { X509Certificate } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';

/** The two files of a client certificate, as absolute paths. */
export interface ClientCertificateFiles {
  certFile: string;
  keyFile: string;
}

/** A certificate and its key, PEM, as TLS takes them. */
export interface ClientKeyPair {
  cert: string;
  key: string;
}

/** Largest certificate or key file read: a chain of a few certificates is a few KiB. */
const MAX_PEM_BYTES = 1024 * 1024;

/** How often the files are looked at, at most: a stat of each, when a call starts. */
export const IDENTITY_CHECK_INTERVAL_MS = 1000;

/**
 * Reads both files and checks that they make a usable pair (the key matches the certificate).
 * Throws an error that names the file, never its content.
 */
export async function readClientKeyPair(files: ClientCertificateFiles): Promise<ClientKeyPair> {
  const [cert, key] = await Promise.all([readPem(files.certFile), readPem(files.keyFile)]);
  try {
    createSecureContext({ cert, key });
  } catch {
    throw new Error(
      `the key in ${files.keyFile} does not fit the certificate in ${files.certFile}`,
    );
  }
  return { cert, key };
}

/** The `notAfter` of the first (leaf) certificate of a PEM chain, as Unix seconds. */
export function certificateNotAfter(certPem: string): number {
  return Date.parse(new X509Certificate(certPem).validTo) / 1000;
}

async function readPem(path: string): Promise<string> {
  const info = await stat(path);
  if (!info.isFile() || info.size > MAX_PEM_BYTES) {
    throw new Error(`${path} is not a regular file of at most ${MAX_PEM_BYTES} bytes`);
  }
  return readFile(path, 'utf8');
}

/** What identifies a file's version without reading it. */
async function stampOf(path: string): Promise<string> {
  const info = await stat(path);
  return `${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}`;
}

/**
 * The client certificate in use for one environment. `pair` is what new connections present;
 * `refresh()` (called by the API client before a call, at most once a second) reads the files
 * again when their inode, size or times changed. A pair that does not load (a half-written
 * rotation: the certificate changed and the key not yet) keeps the previous one until both fit.
 */
export class ClientIdentity {
  #pair: ClientKeyPair;
  #version = 0;
  #stamp: string | null = null;
  #checkedAt = Number.NEGATIVE_INFINITY;
  #refreshing: Promise<void> | null = null;

  constructor(
    readonly files: ClientCertificateFiles,
    initial: ClientKeyPair,
    private readonly checkIntervalMs: number = IDENTITY_CHECK_INTERVAL_MS,
  ) {
    this.#pair = initial;
  }

  /** The pair new connections present. */
  get pair(): ClientKeyPair {
    return this.#pair;
  }

  /** Increases each time a new pair was loaded. */
  get version(): number {
    return this.#version;
  }

  /** Looks at the files (at most once per `IDENTITY_CHECK_INTERVAL_MS`); never throws. */
  refresh(now: number = performance.now()): Promise<void> {
    if (this.#refreshing !== null) return this.#refreshing;
    if (now - this.#checkedAt < this.checkIntervalMs) return Promise.resolve();
    this.#checkedAt = now;
    this.#refreshing = this.#reload()
      .catch(() => undefined)
      .finally(() => {
        this.#refreshing = null;
      });
    return this.#refreshing;
  }

  async #reload(): Promise<void> {
    const stamps = await Promise.all([stampOf(this.files.certFile), stampOf(this.files.keyFile)]);
    const stamp = stamps.join('|');
    if (stamp === this.#stamp) return;
    const pair = await readClientKeyPair(this.files);
    this.#stamp = stamp;
    if (pair.cert === this.#pair.cert && pair.key === this.#pair.key) return;
    this.#pair = pair;
    this.#version++;
  }
}
