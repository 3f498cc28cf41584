#!/usr/bin/env bash
# Builds the Kubernetes control-plane binaries that envtest and the local
# cluster need (etcd, kube-apiserver, kube-controller-manager, kube-scheduler)
# from the Go module proxy into bin/k8s. No release download site is needed.
#
# k8s.io/kubernetes cannot be `go install`ed directly: its go.mod replaces every
# k8s.io staging module with a local path. A small wrapper module pins each
# staging module to the matching v0.x.y release instead.
#
# Idempotent: when every binary exists and bin/k8s/VERSIONS matches, it exits.
set -euo pipefail

ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
KUBERNETES_VERSION="${KUBERNETES_VERSION:-v1.37.2}"

root="$(cd "$(dirname "$0")/.." && pwd)"
out="${K8S_BIN_DIR:-$root/bin/k8s}"
work="$out/.build"
stamp="$out/VERSIONS"
want="etcd=$ETCD_VERSION kubernetes=$KUBERNETES_VERSION"
binaries=(etcd kube-apiserver kube-controller-manager kube-scheduler)

up_to_date() {
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] || return 1
  for b in "${binaries[@]}"; do [ -x "$out/$b" ] || return 1; done
}

if up_to_date; then
  echo "bin/k8s is current ($want)"
  exit 0
fi

mkdir -p "$out" "$work"
export GOFLAGS="${GOFLAGS:--buildvcs=false}" CGO_ENABLED=0
start=$(date +%s)

build_etcd() {
  local dir="$work/etcd"
  mkdir -p "$dir"
  cat >"$dir/go.mod" <<MOD
module kairolog.local/etcdbin

go 1.26
MOD
  (cd "$dir" && go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >/dev/null 2>&1 &&
    go build -trimpath -o "$out/etcd" go.etcd.io/etcd/server/v3)
}

# staging_replaces prints one replace line per k8s.io staging module, read from
# the k8s.io/kubernetes go.mod itself so the list never goes stale.
staging_replaces() {
  local gomod minor
  gomod=$(cd "$work" && go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" |
    sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
  minor="v0.${KUBERNETES_VERSION#v1.}"
  grep -E '^[[:space:]]*k8s\.io/[a-z0-9-]+ => \./staging/' "$gomod" |
    awk -v v="$minor" '{print "replace " $1 " => " $1 " " v}'
}

build_kubernetes() {
  local dir="$work/kubernetes"
  mkdir -p "$dir"
  {
    printf 'module kairolog.local/k8sbin\n\ngo 1.26\n\n'
    staging_replaces
  } >"$dir/go.mod"
  local pkgs=()
  for b in kube-apiserver kube-controller-manager kube-scheduler; do
    pkgs+=("k8s.io/kubernetes/cmd/$b")
  done
  (cd "$dir" && go get "${pkgs[@]/%/@$KUBERNETES_VERSION}" >/dev/null 2>&1)
  local major minor ldflags
  major=$(echo "$KUBERNETES_VERSION" | sed 's/^v\([0-9]*\)\..*/\1/')
  minor=$(echo "$KUBERNETES_VERSION" | sed 's/^v[0-9]*\.\([0-9]*\)\..*/\1/')
  ldflags="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $p.gitVersion=$KUBERNETES_VERSION -X $p.gitMajor=$major -X $p.gitMinor=$minor"
    ldflags+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  for b in kube-apiserver kube-controller-manager kube-scheduler; do
    echo "  building $b"
    (cd "$dir" && go build -trimpath -ldflags "$ldflags" -o "$out/$b" "k8s.io/kubernetes/cmd/$b")
  done
}

echo "Building Kubernetes test binaries into $out ($want)"
echo "  building etcd $ETCD_VERSION"
build_etcd
echo "  resolving k8s.io/kubernetes $KUBERNETES_VERSION"
build_kubernetes
echo "$want" >"$stamp"
echo "Built ${binaries[*]} in $(($(date +%s) - start))s"
