#!/usr/bin/env bash
# Build the pinned promtool (Prometheus 3.x) and helm (3.x) from their Go modules into
# .tools/bin, the project-local tools folder. The pins live in tools/*/go.mod (with go.sum),
# the way kubernetes-mixin builds its promtool. A binary that already reports the pinned
# version is reused, so running this twice costs nothing.
#
# Usage: scripts/install-tools.sh [--force]
# Needs: Go (1.26+) and access to the Go module proxy.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin="${RULEGEN_TOOLS_DIR:-$root/.tools}/bin"
mkdir -p "$bin"
force=${1:-}

# module path | tool package | ldflags template (%s = version)
build() {
  local name=$1 moddir=$2 pkg=$3 module=$4 ldflags=$5
  local version
  version=$(cd "$moddir" && go list -m -f '{{.Version}}' "$module")
  local stamp="$bin/.$name.version"
  if [[ "$force" != "--force" && -x "$bin/$name" && -f "$stamp" && "$(cat "$stamp")" == "$version" ]]; then
    echo "$name $version already in $bin"
    return
  fi
  echo "building $name $version (from $module) into $bin ..."
  (cd "$moddir" && CGO_ENABLED=0 go build -trimpath -ldflags "${ldflags//%s/$version}" -o "$bin/$name.tmp" "$pkg")
  mv "$bin/$name.tmp" "$bin/$name"
  echo "$version" > "$stamp"
}

# Prometheus publishes 3.x as Go module versions v0.3XX.Y (v0.316.0 is Prometheus 3.16.0).
build promtool "$root/tools/promtool" github.com/prometheus/prometheus/cmd/promtool \
  github.com/prometheus/prometheus \
  "-X github.com/prometheus/common/version.Version=%s"
build helm "$root/tools/helm" helm.sh/helm/v3/cmd/helm helm.sh/helm/v3 \
  "-X helm.sh/helm/v3/internal/version.version=%s"

"$bin/promtool" --version | head -1
"$bin/helm" version --short
