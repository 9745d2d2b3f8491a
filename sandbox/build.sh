#!/usr/bin/env bash
# Builds the sandbox's real binaries from Go modules and gathers the CRDs and
# kwok stages they ship. Every component has its own wrapper module under
# sandbox/go/<component> (one go.mod per dependency family).
#
# Outputs are cached outside the repo, keyed by a hash of the wrapper's
# go.mod/go.sum/sources, the Go version and the link flags, so a second run
# (and CI on the same machine) builds nothing. The repo gets symlinks in
# .sandbox/bin and copies in .sandbox/assets.
#
# Go's own build and module caches stay where Go keeps them by default.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cache_root="${GITOPS_SANDBOX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gitops-console/sandbox}"
# GITOPS_SANDBOX_DIR: a second sandbox beside the default one (its own bin/ symlinks and assets/; the
# binaries themselves are shared through the cache)
sandbox_dir="${GITOPS_SANDBOX_DIR:-$repo/.sandbox}"
out_bin="$sandbox_dir/bin"
out_assets="$sandbox_dir/assets"
only="${1:-all}"

if ! command -v go >/dev/null 2>&1; then
  echo "sandbox: Go is not installed. Install Go 1.26 or newer (https://go.dev/doc/install; Debian: apt-get install golang-1.26 or unpack the official tarball to /usr/local/go and add /usr/local/go/bin to PATH), then run again." >&2
  exit 3
fi
if ! command -v git >/dev/null 2>&1; then
  echo "sandbox: git is not installed (apt-get install -y git)." >&2
  exit 3
fi

if [[ "$only" == all || " $only " == *" gitea "* ]] && ! command -v cc >/dev/null 2>&1; then
  echo "sandbox: a C compiler is needed for the forge (Gitea's SQLite driver uses cgo): apt-get install -y gcc" >&2
  exit 3
fi

KUBE_VERSION="v1.36.3"
# The same Go toolchains whatever the caller exported: `go version` is part of each cache key, so a build made with
# GOTOOLCHAIN=go1.27.3 in one shell and one without it in another (CI) would each miss the other's cache and rebuild
# everything (65 minutes on a 2-core machine, seen on 2026-12-07). Go's default, `auto`: each component with the
# installed Go unless its go.mod asks for a newer one; Argo CD, Rollouts and Flagger are built with the go1.27.3
# they declare (ARGOCD_GO below; `go` fetches it from the module proxy once). Forcing go1.27.3 on every component
# (session 40) changed the Flux controllers' behaviour in the suite (image automation never pushed; a
# Kustomization's finalizer went without its prune): the controllers are built as their own releases are.
# SANDBOX_GOTOOLCHAIN overrides.
export GOTOOLCHAIN="${SANDBOX_GOTOOLCHAIN:-auto}"
export CGO_ENABLED=0
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
mkdir -p "$out_bin" "$out_assets" "$cache_root/bin"

log() { printf '[sandbox build %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

key_of() { # component extra...
  local dir="$here/go/$1"; shift
  { cat "$dir"/go.mod "$dir"/go.sum 2>/dev/null; find "$dir" -name '*.go' -type f -print0 | sort -z | xargs -0r cat; go version; printf '%s\n' "$@"; } | sha256sum | cut -c1-16
}

# build COMPONENT "LDFLAGS" PKG:NAME...
# (optional: BUILD_TAGS=... BUILD_CGO=1 in the environment of the call; they are part of the key)
build() {
  local comp="$1" ldflags="$2"; shift 2
  local key dest names=() tags="${BUILD_TAGS:-}" cgo="${BUILD_CGO:-0}" keyextra=()
  [[ -n "$tags" || "$cgo" != 0 ]] && keyextra=("tags=$tags" "cgo=$cgo")
  key="$(key_of "$comp" "$ldflags" "$@" "${keyextra[@]}")"
  dest="$cache_root/bin/$comp-$key"
  for spec in "$@"; do names+=("${spec##*:}"); done
  local missing=0
  for n in "${names[@]}"; do [[ -x "$dest/$n" ]] || missing=1; done
  if [[ $missing == 1 ]]; then
    log "building $comp (${names[*]}) ..."
    local t0=$SECONDS tmp="$dest.tmp.$$"
    rm -rf "$tmp"; mkdir -p "$tmp"
    for spec in "$@"; do
      local pkg="${spec%%:*}" n="${spec##*:}"
      (cd "$here/go/$comp" && CGO_ENABLED="$cgo" go build ${tags:+-tags "$tags"} -ldflags "$ldflags" -o "$tmp/$n" "$pkg")
    done
    if [[ -n "${BUILD_POST:-}" ]]; then "$BUILD_POST" "$tmp"; fi
    rm -rf "$dest"; mv "$tmp" "$dest"
    log "built $comp in $((SECONDS - t0))s"
  else
    log "$comp cached ($dest)"
  fi
  for n in "${names[@]}"; do ln -sfn "$dest/$n" "$out_bin/$n"; done
}

moddir() { # component module
  (cd "$here/go/$1" && go list -m -f '{{.Dir}}' "$2")
}

want() { [[ "$only" == all || " $only " == *" $1 "* ]]; }

kube_ld() {
  local minor="${KUBE_VERSION#v1.}"; minor="${minor%%.*}"
  local v="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    v+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=2026-01-01T00:00:00Z"
  done
  printf '%s' "$v"
}

want etcd && build etcd "-s -w" "go.etcd.io/etcd/server/v3:etcd"
want kube && build kube "$(kube_ld)" \
  "k8s.io/kubernetes/cmd/kube-apiserver:kube-apiserver" \
  "k8s.io/kubernetes/cmd/kube-controller-manager:kube-controller-manager" \
  "k8s.io/kubernetes/cmd/kube-scheduler:kube-scheduler" \
  "k8s.io/kubernetes/cmd/kubectl:kubectl"
want kwok && build kwok "-s -w" "sigs.k8s.io/kwok/cmd/kwok:kwok"
# the resource metrics API (metrics.k8s.io) for the HPA; it scrapes kwok's kubelet-style /metrics/resource
# (its version is client-go's, as its Makefile sets it)
ms_ld="-s -w -X k8s.io/client-go/pkg/version.gitVersion=v0.8.0 -X k8s.io/client-go/pkg/version.gitMajor=0 -X k8s.io/client-go/pkg/version.gitMinor=8 -X k8s.io/client-go/pkg/version.buildDate=2026-01-01T00:00:00Z"
want metrics-server && build metrics-server "$ms_ld" "sigs.k8s.io/metrics-server/cmd/metrics-server:metrics-server"
want kustomize && build kustomize "-s -w -X sigs.k8s.io/kustomize/api/provenance.version=v5.8.2" "sigs.k8s.io/kustomize/kustomize/v5:kustomize"
want flux && build flux-source "-s -w" "github.com/fluxcd/source-controller:source-controller"
want flux && build flux-kustomize "-s -w" "github.com/fluxcd/kustomize-controller:kustomize-controller"
# our renderer on Flux's own library (github.com/fluxcd/pkg/kustomize, as kustomize-controller uses it)
want flux && build flux-render "-s -w" ".:flux-render"
# SOPS (issue 26): the sops CLI encrypts the seed's Secrets with an age key age-keygen makes at start-up;
# kustomize-controller decrypts them with that key (the console never holds it)
want flux && build sops "-s -w" "github.com/getsops/sops/v3/cmd/sops:sops" "filippo.io/age/cmd/age-keygen:age-keygen"
# Argo CD renderers and ignore rules: helm (helm template) and our jq-del on the gojq library
want argo && build helm "-s -w -X helm.sh/helm/v3/internal/version.version=v3.22.0" "helm.sh/helm/v3/cmd/helm:helm"
want argo && build jq-del "-s -w" ".:jq-del"

# Argo CD: one binary, argv[0] (or ARGOCD_BINARY_NAME) picks the component. Built from its own module (not a
# wrapper module: its go.mod replaces gitops-engine with ./gitops-engine, the nested module placed there), with the
# Go toolchain it declares (go 1.27: GOTOOLCHAIN=go1.27.3, served by the module proxy). One patch, for the
# sandbox's loopback rule: the application controller's metrics listener binds 127.0.0.1, not 0.0.0.0 (it has no
# flag for the address). Its CRDs, shipped RBAC and the git/gpg wrapper scripts the repo-server runs go beside
# the binary. Started in the background: it is the longest build, the others build meanwhile.
ARGOCD_VERSION="v3.6.1"
ARGOCD_GO="go1.27.3"
build_argocd() {
  local ld="-s -w -X github.com/argoproj/argo-cd/v3/common.version=${ARGOCD_VERSION#v} -X github.com/argoproj/argo-cd/v3/common.buildDate=2026-01-01T00:00:00Z -X github.com/argoproj/argo-cd/v3/common.gitTreeState=clean"
  local patch='s/fmt.Sprintf("0.0.0.0:%d", metricsPort)/fmt.Sprintf("127.0.0.1:%d", metricsPort)/'
  local key dest
  key="$(printf '%s\n' argocd "$ARGOCD_VERSION" "$ARGOCD_GO" "$ld" "$patch" trimpath cgo=0 | sha256sum | cut -c1-16)"
  dest="$cache_root/bin/argocd-$key"
  if [[ ! -x "$dest/argocd" ]]; then
    log "building argocd (argocd $ARGOCD_VERSION, with $ARGOCD_GO) ..."
    local t0=$SECONDS tmp="$dest.tmp.$$" mods dir eng
    rm -rf "$tmp"; mkdir -p "$tmp"
    mods="$(cd "$tmp" && GOTOOLCHAIN="$ARGOCD_GO" GOFLAGS=-mod=mod go mod download -json \
      "github.com/argoproj/argo-cd/v3@$ARGOCD_VERSION" "github.com/argoproj/argo-cd/gitops-engine/v3@$ARGOCD_VERSION")"
    dir="$(printf '%s\n' "$mods" | sed -n 's/^[[:space:]]*"Dir": "\(.*argo-cd\/v3@.*\)",$/\1/p' | head -1)"
    eng="$(printf '%s\n' "$mods" | sed -n 's/^[[:space:]]*"Dir": "\(.*gitops-engine\/v3@.*\)",$/\1/p' | head -1)"
    [[ -d "$dir" && -d "$eng" ]] || { log "argocd: module download failed"; return 1; }
    cp -r "$dir" "$tmp/src"; chmod -R u+w "$tmp/src"
    rm -rf "$tmp/src/gitops-engine"; cp -r "$eng" "$tmp/src/gitops-engine"; chmod -R u+w "$tmp/src/gitops-engine"
    sed -i "$patch" "$tmp/src/controller/appcontroller.go"
    grep -q '"127.0.0.1:%d", metricsPort' "$tmp/src/controller/appcontroller.go" || { log "argocd: the loopback patch no longer applies"; return 1; }
    (cd "$tmp/src" && GOTOOLCHAIN="$ARGOCD_GO" CGO_ENABLED=0 go build -trimpath -ldflags "$ld" -o "$tmp/argocd" ./cmd)
    mkdir -p "$tmp/hack" "$tmp/manifests"
    cp "$tmp/src/hack/git-verify-wrapper.sh" "$tmp/src/hack/gpg-wrapper.sh" "$tmp/hack/"; chmod +x "$tmp/hack/"*.sh
    cp -r "$tmp/src/manifests/crds" "$tmp/src/manifests/cluster-rbac" "$tmp/manifests/"
    mkdir -p "$tmp/manifests/base"; cp -r "$tmp/src/manifests/base/applicationset-controller" "$tmp/src/manifests/base/application-controller" "$tmp/manifests/base/"
    echo "$ARGOCD_VERSION" > "$tmp/VERSION"
    rm -rf "$tmp/src"
    rm -rf "$dest"; mv "$tmp" "$dest"
    log "built argocd in $((SECONDS - t0))s"
  else
    log "argocd cached ($dest)"
  fi
  for n in argocd argocd-application-controller argocd-repo-server argocd-applicationset-controller; do
    ln -sfn "$dest/argocd" "$out_bin/$n"
  done
  ln -sfn "$dest" "$out_bin/argocd-dist"
}
argocd_pid=""
if want argo; then build_argocd & argocd_pid=$!; fi

# Argo Rollouts (issue 25): its controller from a copy of its own module (go 1.26.10 in its go.mod: built with the
# same toolchain as Argo CD), CGO off. One patch: its metrics and healthz listeners are hard-wired to 0.0.0.0
# (`listenAddr`); rewritten to 127.0.0.1, and the build fails if the patch stops applying. Its CRDs and shipped
# ClusterRole are copied beside the binary.
ROLLOUTS_VERSION="v1.10.2"
build_rollouts() {
  local ld="-s -w -X github.com/argoproj/argo-rollouts/utils/version.version=${ROLLOUTS_VERSION} -X github.com/argoproj/argo-rollouts/utils/version.buildDate=2026-01-01T00:00:00Z -X github.com/argoproj/argo-rollouts/utils/version.gitTreeState=clean"
  local patch='s/listenAddr                         = "0.0.0.0:%d"/listenAddr                         = "127.0.0.1:%d"/'
  local key dest
  key="$(printf '%s\n' rollouts "$ROLLOUTS_VERSION" "$ARGOCD_GO" "$ld" "$patch" trimpath cgo=0 | sha256sum | cut -c1-16)"
  dest="$cache_root/bin/rollouts-$key"
  if [[ ! -x "$dest/rollouts-controller" ]]; then
    log "building argo rollouts ($ROLLOUTS_VERSION, with $ARGOCD_GO) ..."
    local t0=$SECONDS tmp="$dest.tmp.$$" mods dir
    rm -rf "$tmp"; mkdir -p "$tmp"
    mods="$(cd "$tmp" && GOTOOLCHAIN="$ARGOCD_GO" GOFLAGS=-mod=mod go mod download -json "github.com/argoproj/argo-rollouts@$ROLLOUTS_VERSION")"
    dir="$(printf '%s\n' "$mods" | sed -n 's/^[[:space:]]*"Dir": "\(.*argo-rollouts@.*\)",$/\1/p' | head -1)"
    [[ -d "$dir" ]] || { log "argo rollouts: module download failed"; return 1; }
    cp -r "$dir" "$tmp/src"; chmod -R u+w "$tmp/src"
    sed -i "$patch" "$tmp/src/controller/controller.go"
    grep -q '"127.0.0.1:%d"' "$tmp/src/controller/controller.go" || { log "argo rollouts: the loopback patch no longer applies"; return 1; }
    (cd "$tmp/src" && GOTOOLCHAIN="$ARGOCD_GO" CGO_ENABLED=0 go build -trimpath -ldflags "$ld" -o "$tmp/rollouts-controller" ./cmd/rollouts-controller)
    mkdir -p "$tmp/manifests"
    cp -r "$tmp/src/manifests/crds" "$tmp/src/manifests/role" "$tmp/manifests/"
    echo "$ROLLOUTS_VERSION" > "$tmp/VERSION"
    rm -rf "$tmp/src"
    rm -rf "$dest"; mv "$tmp" "$dest"
    log "built argo rollouts in $((SECONDS - t0))s"
  else
    log "argo rollouts cached ($dest)"
  fi
  ln -sfn "$dest/rollouts-controller" "$out_bin/rollouts-controller"
  ln -sfn "$dest" "$out_bin/rollouts-dist"
}
rollouts_pid=""
if want rollouts; then build_rollouts & rollouts_pid=$!; fi

# Flagger (issue 25): the only version the module proxy serves, v1.36.1, from a copy of its module; its HTTP
# server patched to listen on 127.0.0.1 (upstream binds every interface). Its CRDs and ClusterRole come with it.
FLAGGER_VERSION="v1.36.1"
build_flagger() {
  local ld="-s -w -X github.com/fluxcd/flagger/pkg/version.VERSION=${FLAGGER_VERSION#v}"
  local patch='s/Addr:         ":" + port,/Addr:         "127.0.0.1:" + port,/'
  local key dest
  key="$(printf '%s\n' flagger "$FLAGGER_VERSION" "$ARGOCD_GO" "$ld" "$patch" trimpath cgo=0 | sha256sum | cut -c1-16)"
  dest="$cache_root/bin/flagger-$key"
  if [[ ! -x "$dest/flagger" ]]; then
    log "building flagger ($FLAGGER_VERSION, with $ARGOCD_GO) ..."
    local t0=$SECONDS tmp="$dest.tmp.$$" mods dir
    rm -rf "$tmp"; mkdir -p "$tmp"
    mods="$(cd "$tmp" && GOTOOLCHAIN="$ARGOCD_GO" GOFLAGS=-mod=mod go mod download -json "github.com/fluxcd/flagger@$FLAGGER_VERSION")"
    dir="$(printf '%s\n' "$mods" | sed -n 's/^[[:space:]]*"Dir": "\(.*flagger@.*\)",$/\1/p' | head -1)"
    [[ -d "$dir" ]] || { log "flagger: module download failed"; return 1; }
    cp -r "$dir" "$tmp/src"; chmod -R u+w "$tmp/src"
    sed -i "$patch" "$tmp/src/pkg/server/server.go"
    grep -q '"127.0.0.1:" + port' "$tmp/src/pkg/server/server.go" || { log "flagger: the loopback patch no longer applies"; return 1; }
    (cd "$tmp/src" && GOTOOLCHAIN="$ARGOCD_GO" CGO_ENABLED=0 go build -trimpath -ldflags "$ld" -o "$tmp/flagger" ./cmd/flagger)
    mkdir -p "$tmp/manifests"
    cp "$tmp/src/artifacts/flagger/crd.yaml" "$tmp/manifests/crd.yaml"
    cp "$tmp/src/kustomize/base/flagger/rbac.yaml" "$tmp/manifests/rbac.yaml"
    echo "$FLAGGER_VERSION" > "$tmp/VERSION"
    rm -rf "$tmp/src"
    rm -rf "$dest"; mv "$tmp" "$dest"
    log "built flagger in $((SECONDS - t0))s"
  else
    log "flagger cached ($dest)"
  fi
  ln -sfn "$dest/flagger" "$out_bin/flagger"
  ln -sfn "$dest" "$out_bin/flagger-dist"
}
flagger_pid=""
if want flagger; then build_flagger & flagger_pid=$!; fi

# External Secrets Operator (issue 26): its go.mod has a replace directive, so `go install` refuses the module;
# it builds from a copy of it (its dependencies from the proxy), with the Go it declares. Its CRD bundle goes
# beside the binary. Started in the background like Argo CD.
# One patch: ESO registers every provider and generator it ships (35 providers, each with its cloud's SDK: 1,764
# packages, 136 MB of Go source). The sandbox uses the `fake` and `kubernetes` providers, and `vault` for a store
# that fails (test/integration/eso.test.ts); the build keeps those, and the generators `fake`, `password` and
# `uuid` (760 packages, 42 MB; `go list -deps`, 2026-12-06). The CRDs are unchanged: a store on another provider
# is accepted by the apiserver and reported by ESO as a provider it does not know. The build fails if the patch
# stops applying.
ESO_VERSION="v0.16.2"
ESO_PROVIDERS="fake|kubernetes|vault"
ESO_GENERATORS="fake|password|uuid"
build_eso() {
  local ld="-s -w"
  local key dest
  key="$(printf '%s\n' eso "$ESO_VERSION" "$(go version)" "$ld" trimpath cgo=0 "providers=$ESO_PROVIDERS" "generators=$ESO_GENERATORS" | sha256sum | cut -c1-16)"
  dest="$cache_root/bin/eso-$key"
  if [[ ! -x "$dest/external-secrets" ]]; then
    log "building eso (external-secrets $ESO_VERSION) ..."
    local t0=$SECONDS tmp="$dest.tmp.$$" mods dir
    rm -rf "$tmp"; mkdir -p "$tmp"
    mods="$(cd "$tmp" && GOFLAGS=-mod=mod go mod download -json "github.com/external-secrets/external-secrets@$ESO_VERSION")"
    dir="$(printf '%s\n' "$mods" | sed -n 's/^[[:space:]]*"Dir": "\(.*external-secrets@.*\)",$/\1/p' | head -1)"
    [[ -d "$dir" ]] || { log "eso: module download failed"; return 1; }
    cp -r "$dir" "$tmp/src"; chmod -R u+w "$tmp/src"
    local reg="$tmp/src/pkg/provider/register/register.go" gen="$tmp/src/pkg/generator/register/register.go"
    sed -E -i "\\#pkg/provider/#{\\#pkg/provider/($ESO_PROVIDERS)\"#!d}" "$reg"
    sed -E -i "\\#pkg/generator/#{\\#pkg/generator/($ESO_GENERATORS)\"#!d}" "$gen"
    [[ "$(grep -c 'pkg/provider/' "$reg")" == 3 && "$(grep -c 'pkg/generator/' "$gen")" == 3 ]] ||
      { log "eso: the provider patch no longer applies"; return 1; }
    (cd "$tmp/src" && CGO_ENABLED=0 go build -trimpath -ldflags "$ld" -o "$tmp/external-secrets" .)
    mkdir -p "$tmp/manifests"
    cp "$tmp/src/deploy/crds/bundle.yaml" "$tmp/manifests/bundle.yaml"
    echo "$ESO_VERSION" > "$tmp/VERSION"
    rm -rf "$tmp/src"
    rm -rf "$dest"; mv "$tmp" "$dest"
    log "built eso in $((SECONDS - t0))s"
  else
    log "eso cached ($dest)"
  fi
  ln -sfn "$dest/external-secrets" "$out_bin/external-secrets"
  ln -sfn "$dest" "$out_bin/eso-dist"
}
eso_pid=""
if want eso; then build_eso & eso_pid=$!; fi

# Flux helm-controller (issue 26): the proxy serves exact versions (not its version list). v1.6.2, not v1.6.3: that
# one replaces Helm with Flux's fork (github.com/fluxcd/helm/v4 v4.2.4-flux.1), which the proxy refuses. Its go.mod replaces
# its api module with ./api, a nested module the module zip leaves out: that module is downloaded at the same
# version and placed there (as Argo CD's gitops-engine). No patch: its listeners take addresses as flags. Its CRD
# goes beside the binary.
HELMCTL_VERSION="v1.6.2"
# Flux's image automation (issue 26 part 5): image-reflector-controller and image-automation-controller v1.2.3,
# served by the proxy as exact versions, built the same way (each has a nested api module).
IMAGECTL_VERSION="v1.2.3"
# build_nested COMPONENT LABEL MODULE VERSION BINARY: a Flux controller whose go.mod replaces its api module with
# ./api. Its log lines name the component (the start-up page's progress reads "building/built/cached <component>").
build_nested() {
  local component="$1" label="$2" module="$3" version="$4" binary="$5"
  local ld="-s -w"
  local key dest
  key="$(printf '%s\n' "$label" "$version" "$(go version)" "$ld" trimpath cgo=0 | sha256sum | cut -c1-16)"
  dest="$cache_root/bin/$label-$key"
  if [[ ! -x "$dest/$binary" ]]; then
    log "building $component (flux $binary $version) ..."
    local t0=$SECONDS tmp="$dest.tmp.$$" mods dir api
    rm -rf "$tmp"; mkdir -p "$tmp"
    mods="$(cd "$tmp" && GOFLAGS=-mod=mod go mod download -json "$module@$version" "$module/api@$version")"
    dir="$(printf '%s\n' "$mods" | sed -n "s|^[[:space:]]*\"Dir\": \"\(.*/${binary}@.*\)\",\$|\1|p" | head -1)"
    api="$(printf '%s\n' "$mods" | sed -n "s|^[[:space:]]*\"Dir\": \"\(.*/${binary}/api@.*\)\",\$|\1|p" | head -1)"
    [[ -d "$dir" && -d "$api" ]] || { log "$binary: module download failed"; return 1; }
    cp -r "$dir" "$tmp/src"; chmod -R u+w "$tmp/src"
    rm -rf "$tmp/src/api"; cp -r "$api" "$tmp/src/api"; chmod -R u+w "$tmp/src/api"
    (cd "$tmp/src" && CGO_ENABLED=0 go build -trimpath -ldflags "$ld" -o "$tmp/$binary" .)
    mkdir -p "$tmp/manifests"
    cp "$tmp/src/config/crd/bases/"*.yaml "$tmp/manifests/"
    echo "$version" > "$tmp/VERSION"
    rm -rf "$tmp/src"
    rm -rf "$dest"; mv "$tmp" "$dest"
    log "built $component in $((SECONDS - t0))s (flux $binary)"
  else
    log "$component cached ($dest)"
  fi
  ln -sfn "$dest/$binary" "$out_bin/$binary"
  ln -sfn "$dest" "$out_bin/$label-dist"
}
build_helmctl() { build_nested helmctl helmctl github.com/fluxcd/helm-controller "$HELMCTL_VERSION" helm-controller; }
# one after the other: two Go builds at once on two cores only thrash
build_imagectl() {
  build_nested imagectl imagerefl github.com/fluxcd/image-reflector-controller "$IMAGECTL_VERSION" image-reflector-controller &&
    build_nested imagectl imageauto github.com/fluxcd/image-automation-controller "$IMAGECTL_VERSION" image-automation-controller
}
helmctl_pid=""
if want flux || want helmctl; then build_helmctl & helmctl_pid=$!; fi
imagectl_pid=""
if want flux || want imagectl; then build_imagectl & imagectl_pid=$!; fi

# The forge: Gitea (SQLite needs cgo). Its templates and options/ (locales) are read from
# disk at run time; they are copied from the module next to the binary (gitea-static/).
GITEA_VERSION="v1.26.0"
gitea_static() { # dest-dir
  local d; d="$(moddir gitea code.gitea.io/gitea)"
  mkdir -p "$1/gitea-static"
  cp -r "$d/options" "$d/templates" "$1/gitea-static/"
  mkdir -p "$1/gitea-static/public"; cp -r "$d/public/." "$1/gitea-static/public/" 2>/dev/null || true
  chmod -R u+w "$1/gitea-static"
}
if want gitea; then
  BUILD_CGO=1 BUILD_TAGS="sqlite sqlite_unlock_notify" BUILD_POST=gitea_static \
    build gitea "-s -w -X main.Version=${GITEA_VERSION#v} -X 'main.Tags=sqlite sqlite_unlock_notify'" "code.gitea.io/gitea:gitea"
  ln -sfn "$(readlink "$out_bin/gitea" | xargs dirname)/gitea-static" "$out_bin/gitea-static"
fi
# The registry: CNCF Distribution, and our image pusher on go-containerregistry.
want registry && build registry "-s -w -X github.com/distribution/distribution/v3/version.version=v3.1.2" \
  "github.com/distribution/distribution/v3/cmd/registry:registry"
want registry && build imagepush "-s -w" ".:imagepush"

if [[ -n "$argocd_pid" ]]; then wait "$argocd_pid" || { log "argocd build failed"; exit 1; }; fi
if [[ -n "$rollouts_pid" ]]; then wait "$rollouts_pid" || { log "argo rollouts build failed"; exit 1; }; fi
if [[ -n "$flagger_pid" ]]; then wait "$flagger_pid" || { log "flagger build failed"; exit 1; }; fi
if [[ -n "$eso_pid" ]]; then wait "$eso_pid" || { log "eso build failed"; exit 1; }; fi
if [[ -n "$helmctl_pid" ]]; then wait "$helmctl_pid" || { log "flux helm-controller build failed"; exit 1; }; fi
if [[ -n "$imagectl_pid" ]]; then wait "$imagectl_pid" || { log "flux image automation build failed"; exit 1; }; fi

if want assets; then
  # CRDs, kwok stages and kwok's kubelet resource metrics, straight from the modules that ship them.
  rm -rf "$out_assets.tmp"; mkdir -p "$out_assets.tmp"/{crds/flux,crds/argocd,kwok}
  cp "$(moddir flux-source github.com/fluxcd/source-controller)"/config/crd/bases/*.yaml "$out_assets.tmp/crds/flux/"
  cp "$(moddir flux-kustomize github.com/fluxcd/kustomize-controller)"/config/crd/bases/*.yaml "$out_assets.tmp/crds/flux/"
  # helm-controller's CRD: the version that runs (from its build above)
  [[ -e "$out_bin/helmctl-dist" ]] || build_helmctl
  cp "$(readlink -f "$out_bin/helmctl-dist")"/manifests/*.yaml "$out_assets.tmp/crds/flux/"
  kwokdir="$(moddir kwok sigs.k8s.io/kwok)"
  cp "$kwokdir"/kustomize/stage/node/fast/node-initialize.yaml \
     "$kwokdir"/kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
     "$kwokdir"/kustomize/stage/pod/fast/pod-ready.yaml \
     "$kwokdir"/kustomize/stage/pod/fast/pod-complete.yaml \
     "$kwokdir"/kustomize/stage/pod/fast/pod-delete.yaml \
     "$kwokdir"/kustomize/stage/pod/chaos/pod-container-running-failed.yaml \
     "$kwokdir"/kustomize/metrics/resource/metrics-resource.yaml \
     "$out_assets.tmp/kwok/"
  # Argo CD's CRDs: the version that runs (from the build above)
  [[ -e "$out_bin/argocd-dist" ]] || build_argocd
  argodist="$(readlink -f "$out_bin/argocd-dist")"
  cp "$argodist"/manifests/crds/application-crd.yaml "$argodist"/manifests/crds/applicationset-crd.yaml "$argodist"/manifests/crds/appproject-crd.yaml "$out_assets.tmp/crds/argocd/"
  cp "$argodist/VERSION" "$out_assets.tmp/crds/argocd/VERSION"
  # Argo Rollouts' CRDs: the version that runs
  [[ -e "$out_bin/rollouts-dist" ]] || build_rollouts
  rodist="$(readlink -f "$out_bin/rollouts-dist")"
  mkdir -p "$out_assets.tmp/crds/rollouts"
  cp "$rodist"/manifests/crds/*-crd.yaml "$out_assets.tmp/crds/rollouts/"
  mkdir -p "$out_assets.tmp/rollouts"; cp "$rodist"/manifests/role/argo-rollouts-clusterrole.yaml "$out_assets.tmp/rollouts/clusterrole.yaml"
  cp "$rodist/VERSION" "$out_assets.tmp/crds/rollouts/VERSION"
  # Flagger's CRDs and ClusterRole: the version that runs
  [[ -e "$out_bin/flagger-dist" ]] || build_flagger
  fldist="$(readlink -f "$out_bin/flagger-dist")"
  mkdir -p "$out_assets.tmp/crds/flagger" "$out_assets.tmp/flagger"
  cp "$fldist/manifests/crd.yaml" "$out_assets.tmp/crds/flagger/crd.yaml"
  cp "$fldist/manifests/rbac.yaml" "$out_assets.tmp/flagger/rbac.yaml"
  cp "$fldist/VERSION" "$out_assets.tmp/crds/flagger/VERSION"
  # External Secrets Operator's CRDs: the version that runs
  [[ -e "$out_bin/eso-dist" ]] || build_eso
  esodist="$(readlink -f "$out_bin/eso-dist")"
  mkdir -p "$out_assets.tmp/crds/eso"
  cp "$esodist/manifests/bundle.yaml" "$out_assets.tmp/crds/eso/bundle.yaml"
  cp "$esodist/VERSION" "$out_assets.tmp/crds/eso/VERSION"
  chmod -R u+w "$out_assets.tmp"
  rm -rf "$out_assets"; mv "$out_assets.tmp" "$out_assets"
  log "assets ready in $out_assets"
fi
