# KairoLog: a Kafka-shaped replicated commit log and the operator that runs it.

# Image names the operator, the chart and the local node agent agree on.
BROKER_IMG ?= kairolog/broker:dev
OPERATOR_IMG ?= kairolog/operator:dev

# Labels and creation time of the images `make images` builds; the same
# sources, revision and SOURCE_DATE_EPOCH give the same digests.
IMAGE_VERSION ?= dev
IMAGE_REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
IMAGES_DIR ?= $(LOCALBIN)/images

# Go build settings shared with the Dockerfile (a test keeps them identical).
GO_BUILD_ENV := CGO_ENABLED=0
GO_BUILD_FLAGS := -trimpath -ldflags "-s -w"

LOCALBIN ?= $(shell pwd)/bin
K8S_BIN_DIR ?= $(LOCALBIN)/k8s
export KUBEBUILDER_ASSETS ?= $(K8S_BIN_DIR)

CONTROLLER_GEN ?= go tool -modfile=hack/tools/controller-gen/go.mod controller-gen
GOLANGCI_LINT ?= go tool -modfile=hack/tools/golangci-lint/go.mod golangci-lint
HELM ?= $(LOCALBIN)/helm
# cert-manager's certificate controllers and CRDs, for the envtest specs of
# spec.security.ca.issuerRef (hack/tools/cert-manager pins the version).
CERT_MANAGER_DIR ?= $(LOCALBIN)/cert-manager
HELM_VERSION ?= v3.22.0

SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Display this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: ## Generate CRDs and RBAC from the kubebuilder markers into config/ (the topic config rules first, from broker/topicconfig).
	go run ./hack/topicconfig-gen
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd paths="./api/..." paths="./controllers/..." output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
	$(MAKE) --no-print-directory chart-sync

.PHONY: chart-sync
chart-sync: ## Copy the CRDs and RBAC rules from config/ into the Helm chart (a test fails when they differ).
	go run ./hack/chart-sync

.PHONY: docs
docs: ## Generate docs/crd-reference.md from the CRDs in config/crd/bases (a test fails when it is stale).
	go run ./hack/crd-docs

.PHONY: lint-chart
lint-chart: helm ## Lint and render the Helm chart with the helm CLI (go test does the same with the Helm SDK).
	$(HELM) lint --strict charts/kairolog-operator
	$(HELM) template kairolog-operator charts/kairolog-operator --namespace kairolog-system > /dev/null

.PHONY: generate
generate: ## Generate DeepCopy methods for the API types.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: fmt
fmt: ## Run go fmt.
	go fmt ./...

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: lint
lint: ## Run golangci-lint.
	$(GOLANGCI_LINT) run ./...

.PHONY: lint-fix
lint-fix: ## Run golangci-lint and fix what it can.
	$(GOLANGCI_LINT) run --fix ./...

.PHONY: test
test: manifests generate fmt vet k8s-binaries cert-manager build images kafkajs kcat ## Run every test: unit, envtest suites, chart and local-cluster smoke tests.
	go test -count=1 ./... -timeout 30m

.PHONY: test-unit
test-unit: ## Run the tests that need no API server and start no process or broker cluster (go test -short): about a minute.
	go test -short ./... -timeout 10m

.PHONY: test-e2e
test-e2e: build images k8s-binaries helm kcat curl ## Run the end-to-end suite (test/e2e) on a local cluster: helm install, kubectl apply, port-forward, faults.
	KAIRO_E2E=1 go test ./test/e2e/ -v -count=1 -timeout 20m -ginkgo.v -ginkgo.no-color

##@ Build

.PHONY: build
build: ## Build bin/manager, bin/broker, bin/kairoctl and bin/kairo-local.
	@mkdir -p $(LOCALBIN)
	$(GO_BUILD_ENV) go build $(GO_BUILD_FLAGS) -o $(LOCALBIN)/manager ./cmd/manager
	$(GO_BUILD_ENV) go build $(GO_BUILD_FLAGS) -o $(LOCALBIN)/broker ./cmd/broker
	$(GO_BUILD_ENV) go build $(GO_BUILD_FLAGS) -o $(LOCALBIN)/kairoctl ./cmd/kairoctl
	@if [ -d cmd/kairo-local ]; then $(GO_BUILD_ENV) go build $(GO_BUILD_FLAGS) -o $(LOCALBIN)/kairo-local ./cmd/kairo-local; fi

.PHONY: images
images: build ## Build the kairolog/broker and kairolog/operator OCI images without a container engine: bin/images/oci (OCI layout), bin/images/broker.tar and operator.tar (docker save format).
	go run ./hack/images build --bin $(LOCALBIN) --out $(IMAGES_DIR) --broker $(BROKER_IMG) --operator $(OPERATOR_IMG) --version $(IMAGE_VERSION) --revision $(IMAGE_REVISION)

.PHONY: images-push
images-push: ## Push the images of bin/images/oci to $(REGISTRY) as $(REGISTRY)/broker and $(REGISTRY)/operator (credentials of ~/.docker/config.json).
	@test -n "$(REGISTRY)" || { echo "set REGISTRY, e.g. make images-push REGISTRY=ghcr.io/acme" >&2; exit 1; }
	go run ./hack/images push --layout $(IMAGES_DIR)/oci --to $(REGISTRY)

.PHONY: run-broker
run-broker: ## Run a single-node broker on :8080 with ./data.
	go run ./cmd/broker

##@ Demo

.PHONY: demo
demo: build images k8s-binaries helm ## Run KairoLog end to end on a local cluster (root): operator from the chart, samples, a produce/fetch round; Ctrl-C stops it.
	$(LOCALBIN)/kairo-local demo --state-dir .kairo/demo

.PHONY: test-demo
test-demo: k8s-binaries helm ## Run only the demo's test: the demo twice, non-interactively, checking the fetched record and that nothing is left running.
	go test ./cmd/kairo-local -run 'TestDemo$$' -count=1 -v -timeout 15m

##@ Dependencies

.PHONY: kcat
kcat: ## Install kcat (librdkafka), the Kafka client test/kafka and the e2e suite run, from Debian's packages when it is missing.
	@command -v kcat >/dev/null || { apt-get update && apt-get install -y kcat; }

.PHONY: curl
curl: ## Install curl, which the e2e suite runs against a cluster with TLS and users, from Debian's packages when it is missing.
	@command -v curl >/dev/null || { apt-get update && apt-get install -y curl; }

.PHONY: kafkajs
kafkajs: ## Install the kafkajs test client that test/kafka runs under node (pinned by test/kafka/kafkajs/package-lock.json), once.
	@test -d test/kafka/kafkajs/node_modules/kafkajs || npm ci --prefix test/kafka/kafkajs

.PHONY: helm
helm: $(HELM) ## Build the helm CLI (HELM_VERSION) into bin/.
$(HELM):
	@mkdir -p $(LOCALBIN)
	GOBIN=$(LOCALBIN) go install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)

.PHONY: cert-manager
cert-manager: ## Build cert-manager's certificate controllers (hack/tools/cert-manager, pinned) into bin/cert-manager/controller and copy the module's CRDs beside them, for the issuerRef envtest specs.
	@mkdir -p $(CERT_MANAGER_DIR)/crds
	cd hack/tools/cert-manager && $(GO_BUILD_ENV) go build -o $(CERT_MANAGER_DIR)/controller .
	install -m 0644 "$$(cd hack/tools/cert-manager && go list -m -f '{{.Dir}}' github.com/cert-manager/cert-manager)"/deploy/crds/cert-manager.io_*.yaml $(CERT_MANAGER_DIR)/crds/

.PHONY: k8s-binaries
k8s-binaries: ## Build etcd, kube-apiserver, kube-controller-manager and kube-scheduler into bin/k8s (cached).
	K8S_BIN_DIR=$(K8S_BIN_DIR) hack/build-k8s-binaries.sh
