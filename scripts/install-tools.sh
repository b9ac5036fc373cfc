#!/usr/bin/env bash
# Build the pinned promtool and Prometheus server (3.x), Alertmanager and amtool (and rulegen's
# routing helper rulegen-amroute on the same Alertmanager packages), and helm (3.x) with
# rulegen's batch renderer rulegen-helmrender on the same Helm packages
# from their Go modules into the per-user tools cache,
# ${XDG_CACHE_HOME:-$HOME/.cache}/rulegen/tools/bin, outside every checkout: rulegen runs on
# pull requests, and a tool inside the checkout could be replaced by one (rulegen never runs a
# tool from the project it checks). The pins live in tools/*/go.mod
# (with go.sum), the way kubernetes-mixin builds its promtool.
#
# The binaries are stamped the way the upstream release builds stamp them, so `--version`
# names the release: promtool with the ldflags of Prometheus' .promu.yml (Version from the
# module's VERSION file, e.g. 3.16.0 for Go module v0.316.0; Revision; Branch; BuildUser;
# BuildDate) and tags netgo,builtinassets; helm with the -X flags of Helm's Makefile
# (version, gitCommit, gitTreeState, and the Kubernetes version of its client-go).
# Revision and commit are the git commit of the release: the "Origin" hash that
# `go mod download -json` reports when the module proxy records it, else the one written in
# tools/<tool>/REVISION (optional), else "unknown" (helm: empty). BuildDate is the time of the
# release's commit, from the module proxy, so two builds of one recipe print the same.
#
# Each binary has a stamp file next to it holding the recipe it was built with (module version,
# build tags and ldflags, BuildUser aside). A binary whose stamp differs, such as one built by
# an older version of this script, is rebuilt; running this twice costs nothing.
#
# It also fetches the PrometheusRule CRD of the Prometheus Operator release pinned in
# tools/prometheus-operator/go.mod (`go mod download -json`, source only) into <tools dir>/crds/,
# for `rulegen check`'s CRD schema check (rulegen/gitops/sync.py, and rulegen-helmrender, which
# links that release's operator package for the admission webhook's rule validation).
#
# Usage: scripts/install-tools.sh [--force]
#   RULEGEN_TOOLS_DIR=DIR builds into DIR/bin instead (rulegen looks there first); DIR must not
#   lie inside the checkout.
# Needs: Go (1.26+) and access to the Go module proxy.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin="${RULEGEN_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rulegen/tools}/bin"
case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac
case "$(realpath -m -- "$bin" 2>/dev/null || echo "$bin")/" in
  "$(cd "$root" && pwd -P)"/*)
    echo "install-tools.sh: $bin is inside the checkout $root, which a pull request can write;" \
         "set RULEGEN_TOOLS_DIR to a folder outside it (rulegen refuses tools found there, RG762)" >&2
    exit 2 ;;
esac
mkdir -p "$bin"
force=${1:-}

# Without Go the recipes cannot be checked: keep binaries an earlier run built and stamped
# (a newcomer with the tools but no Go can still run `make test`), else say what is missing.
if ! command -v go >/dev/null 2>&1; then
  if [[ "$force" != "--force" && -x "$bin/promtool" && -x "$bin/helm" \
        && -f "$bin/.promtool.version" && -f "$bin/.helm.version" ]]; then
    echo "go not found: keeping the promtool and helm already built in $bin (their recipes are not checked)"
    "$bin/promtool" --version | head -1
    "$bin/helm" version --short
    exit 0
  fi
  echo "install-tools.sh: Go 1.26+ is needed to build promtool and helm into $bin (https://go.dev/dl/)" >&2
  exit 127
fi

# module_json MODDIR MODULE: `go mod download -json` of the module version pinned in MODDIR
# (fields Version, Dir, Info, and Origin.Hash when the proxy reports it).
module_json() {
  (cd "$1" && go mod download -json "$2@$(go list -m -f '{{.Version}}' "$2")")
}
json_field() {  # json_field FIELD < json: the value of the first "FIELD": "value" (strings only)
  { grep -o "\"$1\": *\"[^\"]*\"" || true; } | head -1 | sed 's/.*: *"\(.*\)"/\1/'
}

pinned_revision() {  # pinned_revision MODDIR JSON: the release's git commit, or nothing
  local hash
  hash=$(json_field Hash <<<"$2")
  if [[ -z "$hash" && -f "$1/REVISION" ]]; then
    hash=$(tr -d '[:space:]' < "$1/REVISION")
  fi
  echo "$hash"
}

# build NAME MODDIR PACKAGE TAGS LDFLAGS [USER_LDFLAGS]: USER_LDFLAGS (the build user) are
# left out of the stamp, so another machine or user does not rebuild an identical binary.
build() {
  local name=$1 moddir=$2 pkg=$3 tags=$4 ldflags=$5 user_ldflags=${6:-}
  local stamp="$bin/.$name.version"
  local recipe="$version tags=$tags ldflags=$ldflags"
  if [[ "$force" != "--force" && -x "$bin/$name" && -f "$stamp" && "$(cat "$stamp")" == "$recipe" ]]; then
    echo "$name $version already in $bin"
    return
  fi
  echo "building $name $version into $bin ..."
  (cd "$moddir" && CGO_ENABLED=0 go build -trimpath -tags "$tags" -ldflags "$ldflags $user_ldflags" \
    -o "$bin/$name.tmp" "$pkg")
  mv "$bin/$name.tmp" "$bin/$name"
  echo "$recipe" > "$stamp"
}

# promtool: Prometheus publishes 3.x as Go module versions v0.3XX.Y; the release it is
# (3.16.0 for v0.316.0) is the VERSION file at the root of the module.
module=github.com/prometheus/prometheus
info=$(module_json "$root/tools/promtool" $module)
version=$(json_field Version <<<"$info")
release=$(cat "$(json_field Dir <<<"$info")/VERSION")
revision=$(pinned_revision "$root/tools/promtool" "$info"); revision=${revision:-unknown}
info_time=$(json_field Time < "$(json_field Info <<<"$info")" || true)
build_date=$(date -u -d "${info_time:-@0}" +%Y%m%d-%H:%M:%S)
v=github.com/prometheus/common/version
build promtool "$root/tools/promtool" $module/cmd/promtool netgo,builtinassets \
  "-X $v.Version=$release -X $v.Revision=$revision -X $v.Branch=HEAD -X $v.BuildDate=$build_date" \
  "-X $v.BuildUser=$(id -un)@$(hostname)"

# prometheus: the server of the same pinned module and release, for the live-Prometheus tests
# (a real server on a loopback port). Without the builtinassets tag: the module ships no built
# web UI, and the tests need only its HTTP API.
build prometheus "$root/tools/promtool" $module/cmd/prometheus netgo \
  "-X $v.Version=$release -X $v.Revision=$revision -X $v.Branch=HEAD -X $v.BuildDate=$build_date" \
  "-X $v.BuildUser=$(id -un)@$(hostname)"

# rulegen-backtest: rulegen's own replay of alerting rules (tools/rulegen-backtest), built
# against the same pinned Prometheus module as promtool; the stamp carries a hash of its
# sources, so an edited helper is rebuilt.
bt="$root/tools/rulegen-backtest"
bt_prom=$(cd "$bt" && go list -m -f '{{.Version}}' $module)
if [[ "$bt_prom" != "$version" ]]; then
  echo "install-tools.sh: tools/rulegen-backtest pins $module $bt_prom, tools/promtool $version: keep them equal" >&2
  exit 2
fi
version="$version+src.$(cat "$bt"/go.mod "$bt"/go.sum "$bt"/*.go | sha256sum | cut -c1-12)"
build rulegen-backtest "$bt" . netgo ""

# alertmanager and amtool: pinned in tools/alertmanager/go.mod, stamped like Alertmanager's
# .promu.yml (Version from the module's VERSION file), for routing and inhibition tests.
module=github.com/prometheus/alertmanager
info=$(module_json "$root/tools/alertmanager" $module)
version=$(json_field Version <<<"$info")
am_release=$(cat "$(json_field Dir <<<"$info")/VERSION")
am_revision=$(pinned_revision "$root/tools/alertmanager" "$info"); am_revision=${am_revision:-unknown}
info_time=$(json_field Time < "$(json_field Info <<<"$info")" || true)
am_date=$(date -u -d "${info_time:-@0}" +%Y%m%d-%H:%M:%S)
# The module embeds its built web UI (ui/app/dist), which its zip does not carry: alertmanager
# is built from a temporary copy of the pinned source with a one-page placeholder UI (the
# tests use its HTTP API only), through a `replace` in a temporary copy of the go.mod.
am_src=$(mktemp -d)
trap 'chmod -R u+w "$am_src" 2>/dev/null; rm -rf "$am_src"' EXIT
cp -r "$(json_field Dir <<<"$info")" "$am_src/alertmanager"
chmod -R u+w "$am_src/alertmanager"
for d in "" /elm /mantine; do
  mkdir -p "$am_src/alertmanager/ui/app/dist$d"
  echo '<!doctype html><title>Alertmanager</title><p>Web UI not built: rulegen uses the API only.' \
    > "$am_src/alertmanager/ui/app/dist$d/index.html"
done
cp "$root/tools/alertmanager/go.mod" "$root/tools/alertmanager/go.sum" "$am_src/"
(cd "$am_src" && go mod edit -replace "$module=./alertmanager")
for cmd in alertmanager amtool; do
  build $cmd "$am_src" $module/cmd/$cmd netgo \
    "-X $v.Version=$am_release -X $v.Revision=$am_revision -X $v.Branch=HEAD -X $v.BuildDate=$am_date" \
    "-X $v.BuildUser=$(id -un)@$(hostname)"
done

# rulegen-amroute: rulegen's own helper on the pinned Alertmanager packages (tools/rulegen-amroute,
# same dependency versions as tools/alertmanager): loads an alertmanager.yml with Alertmanager's
# config package and routes many label sets through dispatch.NewRoute in one process (amtool
# tests one label set per run). Stamped with the Alertmanager version and a hash of its source.
am_version=$(cd "$root/tools/rulegen-amroute" && go list -m -f '{{.Version}}' $module)
src_hash=$(cd "$root/tools/rulegen-amroute" && cat go.mod go.sum main.go | sha256sum | cut -c1-16)
version="$am_version+src.$src_hash"
build rulegen-amroute "$root/tools/rulegen-amroute" . netgo ""

# helm: its Makefile sets the version (the tag), the commit, the tree state and the Kubernetes
# version it assumes (client-go v0.X.Y is Kubernetes 1.X) for lint and `.Capabilities`.
module=helm.sh/helm/v3
info=$(module_json "$root/tools/helm" $module)
version=$(json_field Version <<<"$info")
commit=$(pinned_revision "$root/tools/helm" "$info")
k8s_minor=$(cd "$root/tools/helm" && go list -m -f '{{.Version}}' k8s.io/client-go | cut -d. -f2)
h=helm.sh/helm/v3
build helm "$root/tools/helm" $h/cmd/helm "" \
  "-X $h/internal/version.version=$version -X $h/internal/version.metadata= \
-X $h/internal/version.gitCommit=$commit -X $h/internal/version.gitTreeState=clean \
-X $h/pkg/lint/rules.k8sVersionMajor=1 -X $h/pkg/lint/rules.k8sVersionMinor=$k8s_minor \
-X $h/pkg/chartutil.k8sVersionMajor=1 -X $h/pkg/chartutil.k8sVersionMinor=$k8s_minor"

# rulegen-helmrender: rulegen's own helper on the pinned Helm packages (tools/rulegen-helmrender,
# tools/helm's go.mod and go.sum plus the Prometheus Operator's module, the release pinned in
# tools/prometheus-operator): renders many charts in one process the way `helm template` renders
# each, and judges the PrometheusRules they render with the API server's CRD validation and the
# operator's admission webhook code (`rulegen check`'s sync check). Stamped with helm's -X flags
# (`.Capabilities` must say what helm says) and a hash of its sources.
hr="$root/tools/rulegen-helmrender"
if [[ "$(cd "$hr" && go list -m -f '{{.Version}}' $module)" != "$version" ]]; then
  echo "install-tools.sh: tools/rulegen-helmrender must pin $module $version as tools/helm does" >&2
  exit 2
fi
po=github.com/prometheus-operator/prometheus-operator
if [[ "$(cd "$hr" && go list -m -f '{{.Version}}' $po)" != "$(cd "$root/tools/prometheus-operator" && go list -m -f '{{.Version}}' $po)" ]]; then
  echo "install-tools.sh: tools/rulegen-helmrender must pin $po as tools/prometheus-operator does" >&2
  exit 2
fi
version="$version+src.$(cat "$hr"/go.mod "$hr"/go.sum "$hr"/*.go | sha256sum | cut -c1-12)"
build rulegen-helmrender "$hr" . "" \
  "-X $h/internal/version.version=${version%%+*} -X $h/internal/version.metadata= \
-X $h/internal/version.gitCommit=$commit -X $h/internal/version.gitTreeState=clean \
-X $h/pkg/chartutil.k8sVersionMajor=1 -X $h/pkg/chartutil.k8sVersionMinor=$k8s_minor"

# the PrometheusRule CRD: source only, copied out of the pinned module (nothing is built)
module=github.com/prometheus-operator/prometheus-operator
info=$(module_json "$root/tools/prometheus-operator" $module)
version=$(json_field Version <<<"$info")
crds="$(dirname "$bin")/crds"
crd=monitoring.coreos.com_prometheusrules.yaml
mkdir -p "$crds"
install -m 0644 "$(json_field Dir <<<"$info")/example/prometheus-operator-crd/$crd" "$crds/$crd.tmp"
mv "$crds/$crd.tmp" "$crds/$crd"
echo "$version" > "$crds/.prometheus-operator.version"
echo "PrometheusRule CRD of prometheus-operator $version in $crds"

"$bin/promtool" --version | head -1
"$bin/prometheus" --version | head -1
"$bin/alertmanager" --version | head -1
echo "rulegen-amroute $(cat "$bin/.rulegen-amroute.version" | cut -d' ' -f1)"
echo "rulegen-helmrender $(cat "$bin/.rulegen-helmrender.version" | cut -d' ' -f1)"
"$bin/helm" version --short
