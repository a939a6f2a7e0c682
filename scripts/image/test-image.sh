#!/usr/bin/env bash
# Builds the repository's Dockerfile, unmodified, with podman, then runs the image and checks what
# an operator relies on: HEALTHCHECK, /metrics and /readyz, a non-root user, a read-only root with
# one writable volume for the session ledger, config and key files mounted as docs/deploy.md says,
# a clean exit on SIGTERM that closes the open session, that a container started after a
# `podman kill` closes the session its predecessor left open, and that without a ledger volume
# lifecycle runs fail visibly. The simulator runs in a second container from the same image; all
# containers use the host network on free loopback ports. Prints each check as it passes; any
# failure stops the script non-zero.
#
# The image is built from the compose quick-start's `isa-monitor` service definition
# (deploy/compose/compose.yaml), so that build is tested too.
#
# Needs root and podman (scripts/image/setup.sh installs it on Debian). Never skips: when podman
# cannot run, it says why and fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
export CONTAINERS_CONF="$root/scripts/image/containers.conf"

say() { printf '  ok  %s\n' "$*"; }
fail() {
  printf 'FAIL  %s\n' "$*" >&2
  exit 1
}
step() { printf '\n== image: %s\n' "$*"; }

command -v podman >/dev/null || fail "podman is not installed (run scripts/image/setup.sh as root)"
[ "$(id -u)" = 0 ] || fail "run as root: rootless podman needs subuid/subgid ranges this script does not set up"
podman info >/dev/null 2>"${TMPDIR:-/tmp}/podman-info.err" ||
  fail "podman cannot run here: $(tail -3 "${TMPDIR:-/tmp}/podman-info.err")"

tag=${IMAGE_TAG:-localhost/isa-monitor:test}
work=$(mktemp -d /var/tmp/isa-monitor-image-test.XXXXXX)
containers=()
cleanup() {
  for c in "${containers[@]}"; do podman rm -f -t 0 "$c" >/dev/null 2>&1 || true; done
  podman volume rm -f "isa-monitor-ledger-$$" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# GET a URL from the host; prints the body, fails on a non-2xx answer. Node is on the host anyway
# (the tests need it), curl may not be.
http_get() {
  node -e '
    fetch(process.argv[1], { signal: AbortSignal.timeout(5000) })
      .then(async (r) => { const t = await r.text(); if (!r.ok) { console.error(r.status, t); process.exit(1); } process.stdout.write(t); })
      .catch((e) => { console.error(String(e.cause ?? e)); process.exit(1); });
  ' "$1"
}
# Waits up to $2 seconds for command $1 (a shell snippet) to succeed, polling every 0.5 s.
wait_for() {
  local deadline=$(($(date +%s) + $2))
  until eval "$1" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.5
  done
}
free_port() {
  node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'
}

step "base image"
base_started=$(date +%s)
bash scripts/image/base.sh
echo "base image step: $(($(date +%s) - base_started)) s"

step "build (podman build --pull=never --format docker)"
# The compose file names the build; build exactly that, so the quick-start's service is what is
# tested here.
read -r context dockerfile < <(node --input-type=module -e '
  import { readFileSync } from "node:fs";
  import { parse } from "yaml";
  const doc = parse(readFileSync("deploy/compose/compose.yaml", "utf8"));
  const build = doc.services["isa-monitor"].build;
  console.log(build.context, build.dockerfile ?? "Dockerfile");
')
context_dir=$(cd deploy/compose && cd "$context" && pwd)
[ "$context_dir" = "$root" ] || fail "compose builds isa-monitor from $context_dir, not the repository root"
say "compose service isa-monitor builds $dockerfile from the repository root"
build_started=$(date +%s)
# Host networking: the build stage's `npm ci` reaches the npm registry the way the host does.
podman build --pull=never --format docker --network=host --layers \
  -f "$context_dir/$dockerfile" -t "$tag" "$context_dir" >"$work/build.log" 2>&1 || {
  tail -30 "$work/build.log" >&2
  fail "podman build failed (log above)"
}
build_seconds=$(($(date +%s) - build_started))
size_bytes=$(podman image inspect --format '{{.Size}}' "$tag")
say "built $tag in ${build_seconds} s; image size $((size_bytes / 1000000)) MB ($size_bytes bytes)"

health=$(podman image inspect --format '{{json .Config.Healthcheck}}' "$tag")
[[ "$health" == *healthcheck.js* ]] || fail "HEALTHCHECK missing from the image config (built without --format docker?): $health"
[[ "$health" == *'"StartPeriod":15000000000'* ]] || fail "HEALTHCHECK without its 15 s start period: $health"
say "HEALTHCHECK kept in the image config, with its start period"

# Without systemd, podman logs "unable to get systemd connection to add healthchecks" for every
# container of an image with a HEALTHCHECK: it cannot schedule the check, which this script runs
# itself with `podman healthcheck run`. Such messages go to $work/podman.err.
step "contents"
# Only the bundled daemon and the one package the bundle leaves out (pino-pretty, for a terminal;
# scripts/build.mjs): no sources, tests, dev tools, nor the packages the bundle already holds.
podman run --rm --network=none --entrypoint /bin/sh "$tag" -c '
  set -e
  # npm prune leaves an empty @types directory behind: only a non-empty path counts.
  for p in /app/src /app/test /app/bench /app/scripts /app/tsconfig.json /app/node_modules/.bin/tsc \
           /app/node_modules/typescript /app/node_modules/vitest /app/node_modules/eslint \
           /app/node_modules/prettier /app/node_modules/tsx /app/node_modules/@types \
           /app/node_modules/prom-client /app/node_modules/undici /app/node_modules/express \
           /app/node_modules/zod /app/node_modules/yaml /app/node_modules/node-cron /app/node_modules/croner \
           /app/node_modules/pino /app/node_modules/uplot; do
    if [ -e "$p" ] && { [ ! -d "$p" ] || [ -n "$(ls -A "$p")" ]; }; then echo "present: $p"; exit 1; fi
  done
  test -f /app/dist/cli.js && test -f /app/node_modules/pino-pretty/package.json
  for p in /app/dashboards/src /app/alerts/tests; do
    if [ -e "$p" ]; then echo "present: $p (.dockerignore should leave it out)"; exit 1; fi
  done
  node --version
' >"$work/contents.out" 2>>"$work/podman.err" || fail "image contents: $(cat "$work/contents.out")"
say "no sources, tests, dev dependencies or bundled packages in /app; runtime $(tail -1 "$work/contents.out")"
du_modules=$(podman run --rm --network=none --entrypoint /bin/sh "$tag" -c 'du -sk /app/node_modules | cut -f1' 2>>"$work/podman.err")
say "/app/node_modules: ${du_modules} KiB (pino-pretty and its dependencies)"

step "run against a simulator"
key="smoke-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
sim_port=$(free_port)
port=$(free_port)
sim=isa-sim-$$
containers+=("$sim")
podman run -d --name "$sim" --network=host --read-only "$tag" \
  simulate --host 127.0.0.1 --port "$sim_port" --api-key "$key" >/dev/null 2>>"$work/podman.err"
S="http://127.0.0.1:$sim_port"
wait_for "http_get $S/__sim/sessions" 30 || fail "simulator container did not answer: $(podman logs "$sim" 2>&1 | tail -5)"
say "simulator runs from the same image (isa-monitor simulate) at $S"

# The documented way (docs/deploy.md): the config file at /etc/isa-monitor/config.yaml, the key
# as a file named by api_key_file, the ledger on a volume at /var/lib/isa-monitor.
mkdir -p "$work/secrets"
printf '%s\n' "$key" >"$work/secrets/isa-production-api-key"
chmod 0644 "$work/secrets/isa-production-api-key"
# The address stays pending for ever in the simulator, so each lifecycle run holds a session
# open for poll_timeout (8 s of every 10 s): the kill below lands while one is open.
cat >"$work/config.yaml" <<EOF
listen: { host: 127.0.0.1, port: $port }
state_file: /var/lib/isa-monitor/sessions.json
shutdown_timeout: 10s
environments:
  - name: production
    base_url: $S/env/production
    api_key_file: /run/secrets/isa-production-api-key
    ping: { interval: 2s, timeout: 1s }
    lifecycle:
      interval: 10s
      timeout: 9s
      poll_interval: 1s
      poll_timeout: 8s
      addresses:
        - { street1: '6 Forever Pending Ct', zip: '80202', expect: any }
EOF
volume=isa-monitor-ledger-$$
podman volume create "$volume" >/dev/null
run_monitor() {
  podman run -d --name "$1" --network=host --read-only \
    -e ISA_MONITOR_LISTEN_PORT="$port" \
    -v "$work/config.yaml:/etc/isa-monitor/config.yaml:ro" \
    -v "$work/secrets/isa-production-api-key:/run/secrets/isa-production-api-key:ro" \
    -v "$volume:/var/lib/isa-monitor" \
    "$tag" >/dev/null 2>>"$work/podman.err"
}
first=isa-monitor-a-$$
containers+=("$first")
run_monitor "$first"
M="http://127.0.0.1:$port"
wait_for "http_get $M/readyz" 60 || fail "/readyz never answered 200: $(podman logs "$first" 2>&1 | tail -5)"
say "/readyz answers 200 (read-only root, config and key mounted read-only, ledger volume)"
wait_for "http_get $M/metrics | grep '^isa_ping_up{environment=\"production\"} 1'" 30 ||
  fail "isa_ping_up never reached 1: the key file was not used? $(http_get "$M/metrics" | grep isa_ping_up || true)"
say "/metrics answers; isa_ping_up{environment=\"production\"} 1: the key from api_key_file is accepted"

wait_for "podman healthcheck run $first" 30 || fail "podman healthcheck run did not pass"
say "podman healthcheck run: healthy"

uid=$(podman exec "$first" sh -c 'awk "/^Uid:/ { print \$2 }" /proc/1/status')
[ "$uid" != 0 ] || fail "the daemon runs as root"
say "the daemon (pid 1) runs as uid $uid"
if podman exec "$first" sh -c 'touch /app/x' 2>/dev/null; then fail "the root filesystem is writable"; fi
say "the root filesystem is read-only"
# The entry point is the isa-monitor command, so its interpreter line's memory settings
# (src/cli.ts) reach the daemon: Node options on its command line, malloc's in its environment.
cmdline=$(podman exec "$first" sh -c 'tr "\0" " " </proc/1/cmdline')
environ=$(podman exec "$first" sh -c 'tr "\0" "\n" </proc/1/environ')
for option in --max-semi-space-size=1 --v8-pool-size=1; do
  [[ " $cmdline " == *" $option "* ]] || fail "the daemon runs without $option: $cmdline"
done
for variable in MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072; do
  [[ $'\n'"$environ"$'\n' == *$'\n'"$variable"$'\n'* ]] || fail "the daemon runs without $variable"
done
say "the daemon runs with the interpreter line's memory settings: $cmdline"

step "a terminal: logs through pino-pretty"
# The one package loaded from node_modules, and only with a terminal: a demo started with -t must
# come up and log pretty lines, not JSON (and not a missing-module error).
tty_port=$(free_port)
tty=isa-monitor-tty-$$
containers+=("$tty")
podman run -d -t --name "$tty" --network=host "$tag" run --listen "127.0.0.1:$tty_port" >/dev/null 2>>"$work/podman.err"
wait_for "http_get http://127.0.0.1:$tty_port/readyz" 60 || fail "demo with a terminal never got ready: $(podman logs "$tty" 2>&1 | tail -5)"
podman logs "$tty" >"$work/tty.log" 2>&1
grep 'DEMO MODE' "$work/tty.log" >/dev/null || fail "demo with a terminal: no DEMO MODE line: $(tail -5 "$work/tty.log")"
if grep '^{' "$work/tty.log" >/dev/null; then fail "JSON lines on a terminal: pino-pretty was not used"; fi
say "with a terminal (-t), the daemon logs through pino-pretty"
podman stop -t 15 "$tty" >/dev/null 2>>"$work/podman.err"

step "SIGTERM mid-lifecycle"
open_json() { http_get "$S/__sim/sessions?status=open&environment=production"; }
tokens_of() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).sessions.map(x=>x.session_token).join(" ")))'; }
# Sets open_tokens to the sessions open now and still open a second later: the token is on the
# ledger before the check uses it, so a second past its creation it is certainly on disk. A
# session that closed meanwhile (a slow machine saw it late) does not count; the next one will.
open_for_a_second() {
  local first_seen t
  open_tokens=""
  first_seen=$(open_json | tokens_of)
  [ -n "$first_seen" ] || return 1
  sleep 1
  for t in $(open_json | tokens_of); do
    [[ " $first_seen " != *" $t "* ]] || open_tokens+="$t "
  done
  [ -n "$open_tokens" ]
}
# Stop while a lifecycle run holds a session open: the graceful stop must close it.
wait_for open_for_a_second 40 || fail "no lifecycle session was ever open for a second"
stop_started=$(date +%s%N)
podman stop -t 15 "$first" >/dev/null 2>>"$work/podman.err"
stop_ms=$((($(date +%s%N) - stop_started) / 1000000))
code=$(podman inspect --format '{{.State.ExitCode}}' "$first")
[ "$code" = 0 ] || fail "podman stop: exit code $code (expected 0): $(podman logs "$first" 2>&1 | tail -5)"
[ "$stop_ms" -lt 15000 ] || fail "podman stop took $stop_ms ms (limit 15 s)"
still_open=$(open_json | tokens_of)
for t in $open_tokens; do [[ " $still_open " != *" $t "* ]] || fail "session ${t:0:8}… still open after the graceful stop"; done
say "podman stop with a session open: exit code 0 after $stop_ms ms, the session closed"
# Whole files, not pipes into `grep -q`: with pipefail, an early-exiting grep fails the pipe.
podman logs "$first" >"$work/first.log" 2>&1
grep 'isa-monitor starting' "$work/first.log" >/dev/null || fail "the container log is empty or unreadable"
if grep -F "$key" "$work/first.log" >/dev/null; then fail "the API key appears in the container log"; fi
say "the API key appears nowhere in the container log"

step "podman kill mid-lifecycle, then a new container on the same volume"
second=isa-monitor-b-$$
containers+=("$second")
run_monitor "$second"
wait_for open_for_a_second 40 || fail "no lifecycle session was ever open for a second"
podman kill -s KILL "$second" >/dev/null
podman wait "$second" >/dev/null 2>&1 || true
still_open=$(open_json)
for t in $open_tokens; do
  [[ "$still_open" == *"$t"* ]] || fail "session ${t:0:8}… was closed before the kill landed; cannot test recovery"
done
say "killed $second with $(wc -w <<<"$open_tokens") session(s) open in the simulator"
third=isa-monitor-c-$$
containers+=("$third")
run_monitor "$third"
closed() {
  local now
  now=$(open_json)
  for t in $open_tokens; do [[ "$now" != *"$t"* ]] || return 1; done
}
wait_for closed 30 || fail "the new container did not close the leftover session(s): $(podman logs "$third" 2>&1 | tail -5)"
say "a new container on the same volume closed the leftover session(s), seen from the simulator"
podman stop -t 15 "$third" >/dev/null 2>>"$work/podman.err"
[ "$(podman inspect --format '{{.State.ExitCode}}' "$third")" = 0 ] || fail "the third container did not exit 0"

step "no ledger volume"
# Read-only root and no volume: the ledger cannot be written, so the monitor must create no
# session it could not recover: lifecycle runs are skipped as ledger_unwritable (counted, and
# isa_session_ledger_writable is 0), pings go on, and the log says why.
fourth=isa-monitor-d-$$
containers+=("$fourth")
podman run -d --name "$fourth" --network=host --read-only \
  -e ISA_MONITOR_LISTEN_PORT="$port" \
  -v "$work/config.yaml:/etc/isa-monitor/config.yaml:ro" \
  -v "$work/secrets/isa-production-api-key:/run/secrets/isa-production-api-key:ro" \
  "$tag" >/dev/null 2>>"$work/podman.err"
wait_for "http_get $M/metrics | grep '^isa_checks_skipped_total{environment=\"production\",check=\"lifecycle\",reason=\"ledger_unwritable\"} [1-9]'" 40 ||
  fail "without a ledger volume, no lifecycle run was skipped as ledger_unwritable: $(podman logs "$fourth" 2>&1 | tail -3)"
http_get "$M/metrics" | grep '^isa_session_ledger_writable 0' >/dev/null ||
  fail "isa_session_ledger_writable is not 0 without a ledger volume"
wait_for "http_get $M/metrics | grep '^isa_ping_attempts_total{environment=\"production\",result=\"ok\"} [1-9]'" 40 ||
  fail "pings stopped without a ledger volume"
podman logs "$fourth" >"$work/fourth.log" 2>&1
grep EROFS "$work/fourth.log" >/dev/null || fail "the log does not say why the ledger write failed"
wait_for "! open_json | grep session_token" 15 || fail "a session stayed open although the ledger could not be written"
say "without a ledger volume: lifecycle runs skipped as ledger_unwritable (EROFS logged), pings go on, no session left open"
podman stop -t 15 "$fourth" >/dev/null 2>>"$work/podman.err"

printf '\nimage: %s, %s MB, built in %s s; every check above passed\n' "$tag" "$((size_bytes / 1000000))" "$build_seconds"
