/** Usage texts of the command line (docs/cli.md); the check names come from the registry. */
import type { AnyCheck } from '../kernel/check.js';
import { CHECK_LIST, CHECK_NAMES } from '../checks/index.js';

const CHECKS = CHECK_NAMES.join('|');
const AD_HOC_USAGE = CHECK_LIST.flatMap((check: AnyCheck) =>
  check.adHoc ? [check.adHoc.usage] : [],
).join('\n');

export const MAIN_USAGE = `isa-monitor: synthetic monitor for the Internet Service Availability API

Usage:
  isa-monitor run [--config FILE]            run the daemon (demo mode without config)
  isa-monitor check ${CHECKS} [options]
                                             run one check once and print its trace
  isa-monitor simulate [--port P] [--host H] [--api-key KEY ...]
                                             run the ISA API simulator
  isa-monitor validate-config --config FILE  validate a config file, touch no network
  isa-monitor validate-slo FILE...           validate objectives' specs (Sloth prometheus/v1)
  isa-monitor drift --config FILE [--environment NAME] [--json]
                                             contract baselines, differences, and the
                                             comparison across environments
  isa-monitor drift accept --config FILE --environment NAME [--operation OP]
                                             accept what is seen now as the baseline
  isa-monitor report --prometheus URL --from ISO --to ISO [--environment NAME]
                     [--format markdown|html|json]
                                             availability, incidents and objectives from
                                             Prometheus over a range
  isa-monitor <command> --help               help for one command
  isa-monitor --version                      print the version

Exit codes: 0 success, 1 check or report failed, 2 usage or config error.
Docs: docs/configuration.md, docs/metrics.md, docs/alerts.md, docs/simulator.md`;

export const COMMAND_USAGE: Record<string, string> = {
  run: `Usage: isa-monitor run [--config FILE] [--log-level LEVEL] [--listen HOST:PORT]
                        [--web.config.file FILE] [--web.enable-lifecycle]
                        [--measurement.thread auto|inline|worker]

Runs the daemon: every enabled check on its schedule, metrics on /metrics,
status on /api/status, /healthz and /readyz.

  --config FILE             YAML config (default: $ISA_MONITOR_CONFIG)
  --log-level LEVEL         debug | info | warn | error (overrides the config)
  --listen HOST:PORT        where the server listens (overrides listen in the config)
  --web.config.file FILE    TLS, basic auth and headers on every endpoint, in the
                            exporter-toolkit format (docs/deploy.md); exit 2 when invalid
  --web.enable-lifecycle    POST or PUT /-/reload reloads the config as SIGHUP does
  --measurement.thread T    where checks run and are timed: inline (this thread) or worker
                            (a thread of their own); auto (default): inline up to 10
                            environments at start, a worker above (docs/architecture.md)

Without a config file and without any ISA_* environment variable, starts in demo mode:
an embedded ISA API simulator with a scripted fault timeline, two environments
(sandbox, production), metrics on http://127.0.0.1:9464/metrics.
SIGTERM or SIGINT stops gracefully (exit 0). Exit 2 on a config error.`,

  check: `Usage: isa-monitor check ${CHECKS} [--config FILE --environment NAME]
                   [--base-url URL (--api-key-env VAR | --api-key-file FILE)
                    [--ca-file FILE]] [--json]
                   [the check's own --base-url options, below]

Runs one check once against one environment, prints a step-by-step trace (or one JSON
document with --json) and exits 0 when the check passed, 1 when it failed, 2 on a usage
or config error.

  --config FILE         config file; with --environment NAME picks the environment
                        (default: the first one)
  --base-url URL        check this API base URL instead of a configured environment
  --api-key-env VAR     with --base-url: environment variable holding the API key
  --api-key-file FILE   with --base-url: file holding the API key (neither is needed by a
                        check that sends no API request)
  --ca-file FILE        with --base-url: PEM certificate authorities trusted besides the
                        system's (as an environment's ca_file)
  --json                print the result as JSON
With --base-url, per check:
${AD_HOC_USAGE}`,

  simulate: `Usage: isa-monitor simulate [--port P] [--host H] [--api-key KEY ...]
                            [--mode fast|realistic] [--demo-timeline]
                            [--tls [--tls-days N] [--tls-host NAME ...] [--tls-ca-out FILE]]

Runs the ISA API simulator. Prints its base URL as the first line on stdout.
  --port P          port (default 8080; 0 picks a free one)
  --host H          address to listen on (default 127.0.0.1)
  --api-key KEY     accepted bearer key, repeatable (default: $ISA_SIMULATOR_API_KEY, or a
                    random key printed on stderr)
  --mode MODE       fast: lookups resolve in seconds (default); realistic: 20-30 s
  --demo-timeline   play the demo fault timeline (see docs/simulator.md)
  --tls             serve HTTPS with a certificate signed by a CA the simulator makes
  --tls-days N      the certificate's lifetime in days from now (default 30; negative:
                    expired N days ago)
  --tls-host NAME   a name the certificate covers, repeatable (default localhost,
                    127.0.0.1 and --host)
  --tls-ca-out FILE write the CA certificate (PEM) there, for ca_file or curl --cacert`,

  'validate-config': `Usage: isa-monitor validate-config --config FILE

Loads and validates the config, prints every problem at once (one per line, with its
key path), touches no network. Exit 0 when valid, 2 when not.`,

  drift: `Usage: isa-monitor drift --config FILE [--environment NAME] [--json]
       isa-monitor drift accept --config FILE --environment NAME [--operation OP]

Prints the contract baselines the daemon learned (docs/drift.md), the open differences by
severity with an example each, and the differences between environments (shapes, data
sets, provider lists), from contract-baselines.json beside the config's state_file.
accept makes what the environment's operations (or OP alone; "error" for the error
envelopes) return now their baseline, clears their open differences and records who
accepted from where; a running daemon takes it within 5 s.

  --config FILE         YAML config (default: $ISA_MONITOR_CONFIG)
  --environment NAME    one environment (required by accept)
  --operation OP        accept: one operation only
  --json                the document /api/status carries under contract_drift

Exit 0 when done, 1 when accept found nothing to accept, 2 usage or config error.`,

  'validate-slo': `Usage: isa-monitor validate-slo FILE...

Checks objectives' specs as Sloth reads them: prometheus/v1 or Sloth's Kubernetes
PrometheusServiceLevel, one or several YAML documents per file. Prints every problem at
once (file, document, key path), touches no network. Keys Sloth ignores are printed as
warnings. Exit 0 when every file is valid, 2 when not.`,

  report: `Usage: isa-monitor report --prometheus URL --from ISO --to ISO [--environment NAME]
                          [--format markdown|html|json] [--slo FILE]

Reads isa-monitor's series from a Prometheus-compatible HTTP API (Prometheus, Mimir,
Thanos, VictoriaMetrics; GET /api/v1/query_range only) and prints, per environment and
location: availability, scheduled and failed pings, maintenance left out, latency
p50/p95/p99, lifecycle runs and success ratio, time to qualify, error budget remaining and
the incidents. Long ranges are asked in chunks; progress goes to stderr on a terminal.

  --prometheus URL    base URL of the API (a path prefix such as /prometheus is kept);
                      user info (http://user:password@host/) is sent as basic auth, never shown
  --prometheus-password-file FILE
                      the basic-auth password, read from FILE (the user is the URL's)
  --timeout SECONDS   per request (default 30)
  --max-answer-mb N   the largest answer read, after decompression (default 64)
  --from, --to ISO    the range: a date (2026-11-01, midnight UTC) or a date and time
                      (2026-11-01T12:00:00Z; without a zone, UTC)
  --environment NAME  only this environment (default: every one found)
  --format F          markdown (default), html (a page to send) or json
  --slo FILE          the objectives (Sloth prometheus/v1; default: slo/isa-monitor.sloth.yaml)
Exit 0 done, 1 Prometheus unreachable, not a Prometheus API, or no series in the range,
2 usage error (bad dates, --from not before --to, unknown format).`,
};
