/**
 * Container HEALTHCHECK and Kubernetes exec probe (docs/deploy.md, "Probes behind TLS and basic
 * auth"): exits 0 when the daemon's /healthz answers 200 (the slim image has no curl), or
 * /readyz when that is the argument (a readiness probe). The port follows ISA_MONITOR_LISTEN_PORT
 * when set. Behind `--web.config.file`:
 * - ISA_MONITOR_HEALTHCHECK_TLS=true speaks HTTPS. The name is not verified: the probe asks its
 *   own process over loopback, where the certificate's names (a Service's DNS name) never match;
 * - ISA_MONITOR_HEALTHCHECK_USER and ISA_MONITOR_HEALTHCHECK_PASSWORD_FILE give basic auth, the
 *   password from a file (a mounted Secret), never from the command line;
 * - ISA_MONITOR_HEALTHCHECK_CERT_FILE and ISA_MONITOR_HEALTHCHECK_KEY_FILE give a client
 *   certificate when the web configuration requires one.
 */
import { readFileSync } from 'node:fs';
import type { RequestOptions } from 'node:http';
import { http, https } from './server/node-http.js';

const env = process.env;
const tls = env['ISA_MONITOR_HEALTHCHECK_TLS'] === 'true';
const file = (name: string): string | undefined => {
  const path = env[name];
  return path === undefined || path === '' ? undefined : readFileSync(path, 'utf8');
};

try {
  const user = env['ISA_MONITOR_HEALTHCHECK_USER'];
  const password = file('ISA_MONITOR_HEALTHCHECK_PASSWORD_FILE')?.replace(/\r?\n$/, '');
  const options: RequestOptions & { rejectUnauthorized?: boolean; cert?: string; key?: string } = {
    host: '127.0.0.1',
    port: Number(env['ISA_MONITOR_LISTEN_PORT'] ?? '9464'),
    path: process.argv[2] === '/readyz' ? '/readyz' : '/healthz',
    timeout: 4_000,
    ...(user === undefined ? {} : { auth: `${user}:${password ?? ''}` }),
    ...(tls
      ? {
          rejectUnauthorized: false,
          cert: file('ISA_MONITOR_HEALTHCHECK_CERT_FILE'),
          key: file('ISA_MONITOR_HEALTHCHECK_KEY_FILE'),
        }
      : {}),
  };
  process.exitCode = await new Promise<number>((resolve) => {
    const req = (tls ? https().request : http.request)(options, (res) => {
      res.resume();
      resolve(res.statusCode === 200 ? 0 : 1);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(1));
    req.end();
  });
} catch {
  process.exitCode = 1;
}
