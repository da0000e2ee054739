#!/bin/sh
# Creates the swarm's shared bare repository (branch main) unless it exists.
#   AGENCY_SHARED_REPO  where (default /srv/git/shared.git)
#   AGENCY_EXAMPLE      seed it from examples/<name> (e.g. calc) instead of one README commit
#   AGENCY_APP_DIR      where agency is installed (default /app)
set -eu
repo="${AGENCY_SHARED_REPO:-/srv/git/shared.git}"
app="${AGENCY_APP_DIR:-/app}"
if [ -e "$repo/HEAD" ]; then
  echo "init-shared-repo: $repo exists"
  exit 0
fi
if [ -n "${AGENCY_EXAMPLE:-}" ]; then
  node --input-type=module -e '
    const [app, example, repo] = process.argv.slice(1)
    const m = await import(app + "/dist/src/swarm/example-project.js")
    await m.seedBareRepo(await m.loadExample(example), repo)
  ' "$app" "$AGENCY_EXAMPLE" "$repo"
else
  git init -q --bare -b main "$repo"
  work="$(mktemp -d)"
  git -C "$work" init -q -b main
  printf '# shared repository\n\nThe agents of the swarm merge their verified work here.\n' > "$work/README.md"
  git -C "$work" add -A
  git -C "$work" -c user.name=agency -c user.email=agency@agency.invalid commit -q -m 'initial commit'
  git -C "$work" push -q "$repo" main
  rm -rf "$work"
fi
echo "init-shared-repo: created $repo"
