/**
 * Container HEALTHCHECK: exits 0 when the daemon's /healthz answers 200 (the slim image has no
 * curl). The port follows ISA_MONITOR_LISTEN_PORT when set.
 */
const port = process.env['ISA_MONITOR_LISTEN_PORT'] ?? '9464';
try {
  const response = await fetch(`http://127.0.0.1:${port}/healthz`, {
    signal: AbortSignal.timeout(4_000),
  });
  process.exitCode = response.ok ? 0 : 1;
} catch {
  process.exitCode = 1;
}
