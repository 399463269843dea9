# kafka-replay: make help lists the targets.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := help

GO       ?= go
BIN      ?= $(CURDIR)/bin

# The cache root: everything the build fetches or builds outside the checkout
# lives under it, keyed by version, so clean checkouts on one machine (CI)
# reuse it. `make test CACHE_DIR=$$(mktemp -d)` is a run on a machine that
# never built anything: the way to check a change to the build.
CACHE_DIR ?= $(HOME)/.cache/kafka-replay
# Scripts and tests find the same root through this (test/cachedir).
export KAFKA_REPLAY_CACHE_DIR := $(CACHE_DIR)
TOOLS := $(CACHE_DIR)/tools

# Every tool is defined here, before any rule names it. Make expands a rule's
# prerequisites when it reads the rule: a tool defined further down is empty
# there, and is silently never built before its first use
# (test/build: TestToolsBuiltBeforeUse).
GOLANGCI_LINT_VERSION  ?= v2.15.0
CONTROLLER_GEN_VERSION ?= v0.23.0
GOLANGCI_LINT  := $(TOOLS)/golangci-lint-$(GOLANGCI_LINT_VERSION)
CONTROLLER_GEN := $(TOOLS)/controller-gen-$(CONTROLLER_GEN_VERSION)
# helm from the Go module proxy, built by test/tools/helm/build.sh (~2-4 min cold).
HELM_VERSION ?= v3.22.0
HELM         := $(TOOLS)/helm-$(HELM_VERSION)
# krew, so that the plugin's release is installed the way users will.
KREW_VERSION ?= v0.4.3
KREW         := $(TOOLS)/krew-$(KREW_VERSION)
# Real kube-apiserver and etcd for envtest, and the rest of a real cluster
# for e2e, built by test/tools/build.sh (kube-apiserver: ~7 min cold).
KUBE_VERSION       ?= v1.37.2
KUBE_ASSETS        := $(CACHE_DIR)/kube-$(KUBE_VERSION)
KUBEBUILDER_ASSETS := $(KUBE_ASSETS)
# Argo Workflows' workflow-controller, argoexec and argo CLI, built by
# test/tools/argo/build.sh as one go build (9 min cold beside other work on
# 2 cores, 7 CPU-minutes; the CLI adds 15 s to a warm build of the other
# two). Must match test/e2e's argoVersion.
ARGO_VERSION := v4.0.5
ARGO_BIN_DIR := $(TOOLS)/argo-$(ARGO_VERSION)
# Apache Kafka's broker and tools (test/kafka/apache/pom.xml), copied with
# every dependency into KAFKA_LIBS by Maven, whose own repository is in the
# cache root too. The directory is keyed by version: after any other change
# to the pom, delete it.
KAFKA_VERSION ?= 4.4.0
KAFKA_LIBS    := $(CACHE_DIR)/kafka-$(KAFKA_VERSION)/libs
KAFKA_JARS    := $(KAFKA_LIBS)/kafka_2.13-$(KAFKA_VERSION).jar
MVN           ?= mvn
# Strimzi's Kafka, KafkaConnect, KafkaUser and KafkaConnector CRDs for the
# tests, written by Strimzi's own CRD generator over Strimzi's own API model
# (both from Maven Central) as Strimzi's build writes the CRDs it releases,
# checked against pinned sha256 sums (test/tools/strimzi/build.sh). Must
# match test/cachedir's StrimziVersion.
STRIMZI_VERSION ?= 1.2.0
STRIMZI_DIR     := $(CACHE_DIR)/strimzi-$(STRIMZI_VERSION)
STRIMZI_CRDS    := $(STRIMZI_DIR)/crds
# A real Kafka Streams application (test/kafka/streamsapp): kafka-streams and
# its dependencies from Maven, and the application compiled with javac, into
# one directory keyed by version; remade when its pom or source changes.
STREAMS_APP_DIR := $(CACHE_DIR)/streams-app-$(KAFKA_VERSION)
STREAMS_APP     := $(STREAMS_APP_DIR)/classes/ReplayStreamsApp.class
# make demo runs on embedded kfake; KAFKA=apache runs it on Apache Kafka
# (the tests' harness, from KAFKA_LIBS).
KAFKA ?= kfake

# The runner links librdkafka (bundled, static) through cgo.
RUNNER_LDFLAGS ?= -s -w

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: build
build: ## Build the runner (cgo), the launcher and the kubectl plugin (CGO_ENABLED=0) into bin/.
	$(GO) build -ldflags '$(RUNNER_LDFLAGS)' -o $(BIN)/runner ./cmd/runner
	@if [ -d cmd/launcher ]; then CGO_ENABLED=0 $(GO) build -ldflags '-s -w' -o $(BIN)/launcher ./cmd/launcher; fi
	CGO_ENABLED=0 $(GO) build -ldflags '-s -w' -o $(BIN)/kubectl-replay ./cmd/kubectl-replay

.PHONY: fmt
fmt: ## Format the code.
	gofmt -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## go vet, and gofmt as a check.
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint.
	$(GOLANGCI_LINT) run ./...

##@ Test

.PHONY: test
test: test-build test-harness vet lint test-runner test-envtest test-plugin test-chart test-gitops test-plugin-release test-images e2e ## The whole suite CI runs (the README's test command).

.PHONY: test-build
test-build: ## The Makefile itself: with an empty cache root, every target builds each tool before its first use (make -n).
	$(GO) test -count=1 ./test/build/

.PHONY: test-harness
# demo: the README's first command, run as a newcomer runs it; it fails on
# any step whose exit code or committed offsets are not the story's.
test-harness: demo ## The test harness's own tests: the dev cluster's state and shell script, the sample workload and the tools it builds for the docs, Argo's signal overlay; and make demo.
	$(GO) test -count=1 ./test/dev-cluster/... ./test/devsample/... ./test/tools/...

.PHONY: test-fast
test-fast: ## Unit tests only (go test -short): pure packages, no Kafka, no cluster.
	$(GO) test -short -count=1 ./...

# The second run is the same suite on Apache Kafka; -p 1 because each test
# binary starts its own JVM brokers, one binary at a time on 2 cores.
.PHONY: test-runner
test-runner: $(KAFKA_JARS) $(STREAMS_APP) ## Runner: unit tests and the integration suite through real librdkafka, on a 3-broker kfake cluster and then on a 3-node Apache Kafka 4.4 (with the differential tests against Kafka's tools, and a real Kafka Streams application); the Apache Kafka harness.
	$(GO) test -count=1 -timeout 15m ./runner/... ./test/kafka/...
	KAFKA_REPLAY_TEST_APACHE=$(KAFKA_LIBS) KAFKA_REPLAY_TEST_STREAMS_APP=$(STREAMS_APP_DIR) $(GO) test -count=1 -p 1 -timeout 25m ./runner/ ./test/kafka/

.PHONY: kafka-jars
kafka-jars: $(KAFKA_JARS) ## Fetch (once, cached) Apache Kafka's broker and tools jars from Maven Central into KAFKA_LIBS.

# Copied into a fresh directory then renamed, so that an interrupted fetch
# never leaves a classpath that looks complete.
$(KAFKA_JARS):
	rm -rf $(KAFKA_LIBS).tmp && $(MVN) -q -B -Dstyle.color=never -f test/kafka/apache/pom.xml -Dkafka.version=$(KAFKA_VERSION) -Dmaven.repo.local=$(CACHE_DIR)/m2 dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=$(KAFKA_LIBS).tmp && rm -rf $(KAFKA_LIBS) && mv $(KAFKA_LIBS).tmp $(KAFKA_LIBS)

.PHONY: kafka-streams-app
kafka-streams-app: $(STREAMS_APP) ## Fetch kafka-streams from Maven Central and compile the tests' Kafka Streams application with javac (once, cached) into STREAMS_APP_DIR.

# Built in a fresh directory then renamed, as KAFKA_LIBS is.
$(STREAMS_APP): test/kafka/streamsapp/pom.xml test/kafka/streamsapp/ReplayStreamsApp.java
	rm -rf $(STREAMS_APP_DIR).tmp && $(MVN) -q -B -Dstyle.color=never -f test/kafka/streamsapp/pom.xml -Dkafka.version=$(KAFKA_VERSION) -Dmaven.repo.local=$(CACHE_DIR)/m2 dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=$(STREAMS_APP_DIR).tmp/libs && javac -Xlint:all -Werror -d $(STREAMS_APP_DIR).tmp/classes -cp '$(STREAMS_APP_DIR).tmp/libs/*' test/kafka/streamsapp/ReplayStreamsApp.java && rm -rf $(STREAMS_APP_DIR) && mv $(STREAMS_APP_DIR).tmp $(STREAMS_APP_DIR)

.PHONY: bench
bench: $(KAFKA_JARS) ## Benchmarks: plan+commit for 1,000 and 10,000 partitions on kfake; then on Apache Kafka the runner against kafka-consumer-groups and a franz-go tool, in alternating rounds; requests by kind, wall time, CPU, peak memory.
	$(GO) test -run '^$$' -bench BenchmarkReplay -benchtime 5x -timeout 30m ./runner/
	KAFKA_REPLAY_TEST_APACHE=$(KAFKA_LIBS) $(GO) test -run '^$$' -bench BenchmarkCompareTools -benchtime 5x -timeout 60m ./runner/

.PHONY: fuzz
fuzz: ## Fuzz the target, scope and result-file parsers for 30s each.
	$(GO) test -run '^$$' -fuzz FuzzParseTarget -fuzztime 30s ./runner/config/
	$(GO) test -run '^$$' -fuzz FuzzParseScope -fuzztime 30s ./runner/config/
	$(GO) test -run '^$$' -fuzz FuzzDecodeResultFile -fuzztime 30s ./runner/config/

.PHONY: demo
demo: $(if $(filter apache,$(KAFKA)),$(KAFKA_JARS)) ## Embedded 3-broker Kafka (KAFKA=apache: Apache Kafka 4.4), then the runner: dry run, the plan applied, idempotent rerun, a skip refused, undo.
	@case '$(KAFKA)' in kfake|apache) ;; *) echo 'KAFKA=$(KAFKA): want kfake or apache' >&2; exit 2;; esac
	$(GO) build -o $(BIN)/runner ./cmd/runner
	$(if $(filter apache,$(KAFKA)),KAFKA_REPLAY_TEST_APACHE=$(KAFKA_LIBS)) $(GO) run ./test/demo --runner $(BIN)/runner

.PHONY: test-gitops
test-gitops: ## The Argo CD (Lua) and Flux (CEL) health checks of charts/kafka-replay/files/health, run as Argo CD and Flux run them (envtest: test-envtest).
	$(GO) test -count=1 ./test/gitops/...

##@ kubectl plugin

# The release: cmd/kubectl-replay cross-built (CGO_ENABLED=0), a tar.gz per
# platform with LICENSE, sha256sums.txt and the krew manifest replay.yaml
# rendered from cmd/kubectl-replay/krew/replay.yaml.tmpl. The archives are
# reproducible. PLUGIN_BASE_URL is where they will be downloaded from.
PLUGIN_VERSION   ?= v$(shell awk -F'"' '/^appVersion:/ {print $$2}' charts/kafka-replay/Chart.yaml)
PLUGIN_DIST      ?= $(CURDIR)/dist/kubectl-replay
PLUGIN_PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64
PLUGIN_BASE_URL  ?= https://github.com/kafka-replay/kafka-replay/releases/download/$(PLUGIN_VERSION)

.PHONY: test-plugin
test-plugin: $(HELM) envtest-assets ## kubectl replay: unit and golden tests, every verb on envtest with the launcher and the chart's admission policies, --wait on a real terminal (tmux).
	HELM=$(HELM) KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) $(GO) test -count=1 -timeout 15m ./cmd/kubectl-replay/internal/...

.PHONY: plugin-release
plugin-release: ## Cross-build kubectl-replay, archive it per platform, write sha256sums.txt and the krew manifest into PLUGIN_DIST.
	$(GO) run ./cmd/kubectl-replay/krew --version '$(PLUGIN_VERSION)' --out '$(PLUGIN_DIST)' --platforms '$(PLUGIN_PLATFORMS)' --base-url '$(PLUGIN_BASE_URL)'

$(KREW):
	@mkdir -p $(TOOLS)
	GOBIN=$(TOOLS)/.gobin GOFLAGS=-mod=mod $(GO) install sigs.k8s.io/krew/cmd/krew@$(KREW_VERSION)
	mv $(TOOLS)/.gobin/krew $@

.PHONY: test-plugin-release
test-plugin-release: plugin-release $(KREW) ## The release: valid krew manifest, its sha256 those of the archives, each archive the plugin for its os/arch and LICENSE, installed by krew itself.
	PLUGIN_DIST='$(PLUGIN_DIST)' KREW='$(KREW)' $(GO) test -count=1 ./cmd/kubectl-replay/krew/

##@ Images

# images/build: docker when an engine answers, otherwise podman with local
# stand-in bases (debootstrap, cached). IMAGES_SAVE=DIR also writes
# docker-archive tarballs for `ctr -n k8s.io images import`.
IMAGES_SAVE ?=

.PHONY: images
images: ## Build the runner and launcher images (tags: RUNNER_IMAGE, LAUNCHER_IMAGE; see images/build --help).
	images/build $(if $(IMAGES_SAVE),--save $(IMAGES_SAVE))

.PHONY: test-images
test-images: ## Build both images; run the runner image read-only as 65532 against embedded Kafka; sizes, contents.
	$(GO) test ./test/images/ -count=1 -timeout 40m -v

##@ Launcher

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Regenerate deepcopy, the ReplayRequest CRD (charts/kafka-replay/crds) and the launcher RBAC (charts/kafka-replay/files/rbac).
	test/tools/generate.sh $(CONTROLLER_GEN)

.PHONY: envtest-assets
envtest-assets: ## Build (once, cached) kube-apiserver and etcd for envtest.
	KUBE_VERSION=$(KUBE_VERSION) KUBE_ASSETS_DIR=$(KUBE_ASSETS) test/tools/build.sh etcd kube-apiserver

.PHONY: test-envtest
test-envtest: $(CONTROLLER_GEN) envtest-assets strimzi-crds ## Launcher: unit tests, generated-files check, envtest suite on a real apiserver + etcd.
	CONTROLLER_GEN=$(CONTROLLER_GEN) KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) KAFKA_REPLAY_STRIMZI_CRDS=$(STRIMZI_CRDS) $(GO) test -count=1 -timeout 20m ./launcher/... ./cmd/launcher/...

.PHONY: strimzi-crds
strimzi-crds: ## Generate (once, cached) Strimzi's CRDs for the tests with Strimzi's own generator, from Maven Central; sha256-checked.
	STRIMZI_VERSION=$(STRIMZI_VERSION) STRIMZI_DIR=$(STRIMZI_DIR) MVN=$(MVN) test/tools/strimzi/build.sh >/dev/null

.PHONY: bench-launcher
# One API server per benchmark: a launcher caches every request and runner
# Job it finds, and the first benchmark's would count in the second's.
bench-launcher: envtest-assets ## Launcher on envtest: 1,000 requests over 100 groups, then a request over 200 groups; latencies and peak memory.
	KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) $(GO) test -run '^$$' -bench '^BenchmarkLauncher$$' -benchtime 1x -timeout 30m ./launcher/
	KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) $(GO) test -run '^$$' -bench '^BenchmarkLauncherGroups$$' -benchtime 1x -timeout 30m ./launcher/

##@ Chart

.PHONY: helm
helm: $(HELM) ## Build (once, cached) helm from the Go module proxy.

$(HELM):
	TOOLS=$(TOOLS) HELM_VERSION=$(HELM_VERSION) test/tools/helm/build.sh >/dev/null

.PHONY: chart-lint
chart-lint: $(HELM) ## helm lint --strict the chart, with the default values and with every option on.
	$(HELM) lint --strict charts/kafka-replay
	$(HELM) lint --strict charts/kafka-replay --values test/chart/testdata/all-on.yaml

.PHONY: test-chart
test-chart: $(HELM) envtest-assets ## Chart: lint, render, schema, runbook Jobs vs the launcher's, server-side dry-run on envtest, Argo example.
	HELM=$(HELM) KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) $(GO) test -count=1 -timeout 15m ./test/chart/...

##@ End-to-end

# A real single-node cluster (test/cluster) inside its own network namespace:
# needs root and Debian's containerd, runc, containernetworking-plugins,
# conntrack and iptables (.ci/run installs them).
CLUSTER_BINARIES := etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl kube-proxy

.PHONY: cluster-binaries
cluster-binaries: ## Build (once, cached) etcd, the control plane, kubelet, kubectl and kube-proxy for the real cluster.
	KUBE_VERSION=$(KUBE_VERSION) KUBE_ASSETS_DIR=$(KUBE_ASSETS) test/tools/build.sh $(CLUSTER_BINARIES)

.PHONY: argo-binaries
argo-binaries: ## Build (once, cached) Argo Workflows' workflow-controller, argoexec and argo CLI for the end-to-end Argo scenarios and the docs' argo commands.
	TOOLS=$(TOOLS) ARGO_VERSION=$(ARGO_VERSION) test/tools/argo/build.sh >/dev/null

.PHONY: e2e
# -p 1: the harness's own teardown tests and the scenarios each bring a
# cluster up; one at a time keeps the 2-core machine's timings honest.
e2e: cluster-binaries argo-binaries $(HELM) $(KAFKA_JARS) strimzi-crds ## End-to-end on a real single-node cluster: teardown checks, smoke test, images, chart, scenarios on kfake and some also on Apache Kafka 4.4 (test/e2e/README.md), Argo.
	HELM=$(HELM) KUBE_ASSETS=$(KUBE_ASSETS) ARGO_BIN_DIR=$(ARGO_BIN_DIR) KAFKA_REPLAY_E2E_APACHE=$(KAFKA_LIBS) KAFKA_REPLAY_STRIMZI_CRDS=$(STRIMZI_CRDS) $(GO) test -count=1 -p 1 -v -timeout 60m ./test/cluster/ ./test/e2e/

.PHONY: demo-cluster
demo-cluster: cluster-binaries $(HELM) ## Full demo: real cluster, chart, a ReplayRequest against embedded Kafka, then teardown.
	HELM=$(HELM) KUBE_ASSETS=$(KUBE_ASSETS) $(GO) run ./test/demo-cluster

# The dev cluster's state (dev-cluster.json, the shell script, bin/) goes
# to DEV_CLUSTER_DIR, its admin kubeconfig to DEV_KUBECONFIG.
DEV_CLUSTER_DIR ?= /tmp/kafka-replay-dev-cluster
DEV_KUBECONFIG  ?= $(DEV_CLUSTER_DIR)/kubeconfig

.PHONY: dev-cluster
dev-cluster: cluster-binaries $(HELM) ## Real cluster with the chart, embedded Kafka, sample topics and groups; stays up (^C or dev-cluster-down). Prints the shell command.
	$(GO) build -o $(BIN)/dev-cluster ./test/dev-cluster
	HELM=$(HELM) KUBE_ASSETS=$(KUBE_ASSETS) $(BIN)/dev-cluster up --dir $(DEV_CLUSTER_DIR) --kubeconfig $(DEV_KUBECONFIG)

.PHONY: dev-cluster-down
dev-cluster-down: ## Tear down the dev cluster recorded in DEV_CLUSTER_DIR (refuses any other directory).
	$(GO) build -o $(BIN)/dev-cluster ./test/dev-cluster
	$(BIN)/dev-cluster down --dir $(DEV_CLUSTER_DIR)

.PHONY: dev-stop-consumer
dev-stop-consumer: ## Scale the dev cluster's live consumer of group billing (Deployment billing/billing-consumer) to 0, so that replays of it can apply.
	$(GO) build -o $(BIN)/dev-cluster ./test/dev-cluster
	$(BIN)/dev-cluster stop-consumer --dir $(DEV_CLUSTER_DIR)

##@ Tools

$(GOLANGCI_LINT):
	@mkdir -p $(TOOLS)
	GOBIN=$(TOOLS)/.gobin $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(TOOLS)/.gobin/golangci-lint $@

$(CONTROLLER_GEN):
	@mkdir -p $(TOOLS)
	GOBIN=$(TOOLS)/.gobin $(GO) install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)
	mv $(TOOLS)/.gobin/controller-gen $@
