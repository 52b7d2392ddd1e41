# reconcilekit — every command a developer or CI needs.
# `make help` lists every target with one line each, from the `## ` comment on
# the target's own line (fmt-check fails if a target has none); `make` alone is
# `make test`, the command CI runs. Costs and the repository map:
# docs/development.md.

GO            ?= go
# Every go command runs on Go 1.27.3, which the go command fetches once from
# the module proxy (about 76 MB): govulncheck finds standard-library
# vulnerabilities in the machine's go1.26.8 that go1.26.9 fixed, and 1.27.3 is
# the fixed release served here. Override with GOTOOLCHAIN=local to use the
# machine's Go.
GOTOOLCHAIN   ?= go1.27.3
export GOTOOLCHAIN
# Every go command of make builds with -trimpath, added to whatever GOFLAGS
# the environment or go env holds. hack/release's install test builds
# README's quick starts in a fresh module with a module cache of its own,
# where only -trimpath lets the build cache serve client-go and
# controller-runtime: with it everywhere, the packages unit, vet and e2e-test
# compile are the install test's too, and a cold make test compiles each
# dependency once per configuration (race or not, 386 or not, k8s.io floor
# or newest), not twice. Stack traces then name module paths
# (github.com/reconcilekit/reconcilekit/reconcile/sync.go) instead of
# directories (docs/development.md#what-each-target-costs).
GOFLAGS       := $(strip $(filter-out -trimpath,$(shell GOTOOLCHAIN=local $(GO) env GOFLAGS 2>/dev/null)) -trimpath)
export GOFLAGS
STATICCHECK   := $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
# Modules and workspaces (docs/development.md#modules-and-workspaces): the
# root go.work joins the root module and adapters (at their floors),
# examples/go.work joins those two and the examples; every other module has
# a go.work of its own. The adapters and examples require the root module
# by version, never with replace; go.work maps that version onto the tree.
MODULES       := . $(wildcard adapters) $(wildcard examples) test/controlplane hack/release
# Modules whose tests start real control planes: run by e2e-test, not unit.
E2E_MODULES   := test/controlplane
# go test's -timeout (10 minutes unless given) bounds a test binary's run,
# not the compile before it; tests that run go commands compile inside it,
# and on a cold machine that is most of their time. Every go test of make
# test carries an explicit -timeout sized for a cold build on the shared
# 2-core machine (docs/development.md#what-each-target-costs has the cold
# figures): hack/release's install test (in unit) builds README's quick
# starts and the examples in a fresh module; e2e-test's tests build the
# examples' controllers.
UNIT_TIMEOUT  ?= 30m
COMPAT_TIMEOUT ?= 20m
CONFORMANCE_TIMEOUT ?= 20m
E2E_TIMEOUT   ?= 30m
DEMO_CLUSTER_ARGS ?=
FUZZTIME      ?= 30s
SOAKCHECKS    ?= 5000
# Cases of reconcile's TestModelSafeWithAnyOwner (issue 32) and
# TestModelNeverRunsAway (issue 40) in make soak; make test runs their
# defaults, 50,000 each (safetyCases, configSafetyCases).
SAFETY_SOAK_CASES ?= 1000000
# make soak's cases of adapters/sharding's TestModelShards (100,000 in make test).
SHARD_SOAK_CASES ?= 1000000
# make soak's cases of adapters/sharding's TestModelShardedNeverRunsAway (6,000
# in make test, shardSafetyCases).
SHARD_SAFETY_SOAK_CASES ?= 60000
BENCHTIME     ?= 1s
# test/conformance is a module of its own (it requires k8s.io/kubernetes);
# it is vetted with the others but tested by conformance-test, because its
# tests bind unexported upstream functions (go:linkname) and need
# -ldflags=-checklinkname=0.
CONFORMANCE_DIR    := test/conformance
CONFORMANCE_FLAGS  := -race -count=1 -ldflags=-checklinkname=0
# rapid checks per differential test: 2000 give ~170,000 cases, 20000 ~1,700,000.
CONFORMANCE_CHECKS ?= 2000
CONFORMANCE_FULL_CHECKS ?= 20000
# test/operators/kuberay (issue 35) is a module of its own too: it copies
# KubeRay's ray-operator v1.5.0, swaps its hand-written scale expectations
# for an adapter over ours, and requires KubeRay's own tests to give the same
# results before and after. Its Go files build on the standard library alone
# (the adapter carries a build tag), so vet and staticcheck cover them; its
# tests build KubeRay, so only operator-test runs them. OPERATOR_ARGS=
# leaves out KubeRay's envtest suite.
OPERATOR_DIR     := test/operators/kuberay
OPERATOR_ARGS    ?= -kuberay.envtest
OPERATOR_TIMEOUT ?= 120m
BENCH_UPSTREAM_COUNT ?= 5
BENCH_UPSTREAM_TIME  ?= 500ms
# -bench pattern, e.g. '^BenchmarkVs(Calculate|ExpectationsCycle)' for some rows only.
BENCH_UPSTREAM_FILTER ?= ^BenchmarkVs
# Packages whose tests use rapid; -rapid.* flags are unknown elsewhere.
RAPID_PKGS    ?= ./internal/podutil/ ./expectations/ ./slowstart/ ./podrank/ ./status/ ./reconcile/

.PHONY: all help test check fmt-check vet vet386 vulncheck staticcheck api-check release tidy gomod unit bench fuzz soak scenarios demo lines rbac compat controlplane e2e-test demo-cluster conformance-test conformance operator-test bench-upstream figures compare

all: test ## the same as make test (the default target)

# Every target line carries `## what it does`; help prints them in file order.
HELP_TARGET_RE := ^[a-z][a-z0-9-]*:([^=]|$$)
help: ## this list: every target, one line each
	@grep -E '$(HELP_TARGET_RE)' $(firstword $(MAKEFILE_LIST)) | \
		sed -n 's/^\([a-z][a-z0-9-]*\):.*## \(.*\)$$/  make \1|\2/p' | \
		awk -F'|' '{ printf "%-24s %s\n", $$1, $$2 }'

test: fmt-check vet vet386 staticcheck vulncheck api-check compat unit conformance-test e2e-test ## what CI runs: fmt-check vet vet386 staticcheck vulncheck api-check compat unit conformance-test e2e-test

# The inner loop: make test without the real control plane (e2e-test), the
# differential tests against k8s.io/kubernetes (conformance-test), the
# supported ranges (compat), the 32-bit vet and govulncheck, and with less
# of unit: reconcile's two model tests at CHECK_SAFETY_CASES cases instead
# of 50,000, and -short (which skips the install test from a file proxy and
# shortens reconcile's simulations). Its warm cost is in docs/development.md.
CHECK_SAFETY_CASES ?= 5000
check: fmt-check vet staticcheck api-check ## the fast inner loop (≤ 3 min warm): fmt-check, vet, staticcheck, api-check, and unit with -short and the model tests at CHECK_SAFETY_CASES (5000) cases
	@$(MAKE) --no-print-directory unit UNIT_FLAGS=-short \
		UNIT_MODEL_ARGS='-safety.cases=$(CHECK_SAFETY_CASES) -configsafety.cases=$(CHECK_SAFETY_CASES)'

fmt-check: ## gofmt check of every Go file, and a help line on every target
	@out=$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt: these files need formatting:"; echo "$$out"; exit 1; fi
	@out=$$(grep -E '$(HELP_TARGET_RE)' $(firstword $(MAKEFILE_LIST)) | grep -v '## ' | cut -d: -f1); \
	if [ -n "$$out" ]; then echo "make help: these targets have no '## ' help comment on their line:"; echo "$$out"; exit 1; fi

vet: ## go vet in every module (root, adapters, examples, test/controlplane, hack/release, test/conformance, test/operators/kuberay)
	@for m in $(MODULES) $(CONFORMANCE_DIR) $(OPERATOR_DIR); do echo "go vet ($$m)"; (cd $$m && $(GO) vet ./...) || exit 1; done

# govulncheck, pinned, against a pinned copy of the Go vulnerability database
# fetched as the Go module golang.org/x/vulndb through the module proxy (this
# machine cannot reach vuln.go.dev); govulncheck reads its data/osv directory
# of OSV files directly. It fails on any vulnerability our code can reach, in
# a module we require or in the standard library of the Go it runs on. It
# checks the library's modules (LIBRARY_MODULES, below), which users build.
GOVULNCHECK   := $(GO) run golang.org/x/vuln/cmd/govulncheck@v1.9.0
VULNDB        := golang.org/x/vulndb@v0.0.0-20261105234957-e22db6528018
vulncheck: ## govulncheck (pinned) in the library's modules against a pinned vulnerability database
	@db=$$($(GO) mod download -json $(VULNDB) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'); \
	test -n "$$db" || { echo "vulncheck: could not download $(VULNDB)"; exit 1; }; \
	for m in $(LIBRARY_MODULES); do echo "govulncheck ($$m)"; (cd $$m && $(GOVULNCHECK) -db "file://$$db/data/osv" ./...) || exit 1; done

# Every package and test of the library's modules must build for 32-bit
# targets (int is 32 bits there). test/controlplane and test/conformance
# are test harnesses around amd64 Kubernetes binaries and k8s.io/kubernetes;
# building them for 386 would double their cold compile for no user.
LIBRARY_MODULES := . $(wildcard adapters) $(wildcard examples)
vet386: ## GOARCH=386 go vet in the library's modules (root, adapters, examples)
	@for m in $(LIBRARY_MODULES); do echo "GOARCH=386 go vet ($$m)"; (cd $$m && GOARCH=386 $(GO) vet ./...) || exit 1; done

staticcheck: ## staticcheck (pinned) in every module
	@for m in $(MODULES) $(CONFORMANCE_DIR) $(OPERATOR_DIR); do echo "staticcheck ($$m)"; (cd $$m && $(STATICCHECK) ./...) || exit 1; done

# reconcile's two 50,000-case model tests (MODEL_TESTS) take about 40 s of
# one core each, and one go test of the package runs them one after the
# other. unit builds reconcile's test binary once and runs each of the two
# in a process of its own, beside go test of the rest of the root module
# (which skips them), so that both cores work; then the other modules.
MODEL_TESTS   := TestModelSafeWithAnyOwner TestModelNeverRunsAway
MODEL_TESTS_RE := ^(TestModelSafeWithAnyOwner|TestModelNeverRunsAway)$$
# UNIT_FLAGS go to every go test of unit; UNIT_MODEL_ARGS to the two model
# tests' processes (check sets both).
UNIT_FLAGS      ?=
UNIT_MODEL_ARGS ?=
UNIT_DIR      := .cache/unit
unit: ## go test -race in the root, adapters, examples and hack/release modules (the last installs README's modules from a file proxy)
	@echo "go test -race (.; reconcile's $(MODEL_TESTS) in processes of their own beside it)"
	@mkdir -p $(UNIT_DIR) && $(GO) test -race -c -o $(UNIT_DIR)/reconcile.test ./reconcile/
	@bin=$$(pwd)/$(UNIT_DIR)/reconcile.test; pids=; \
	for t in $(MODEL_TESTS); do \
		(cd reconcile && $$bin -test.run "^$$t\$$" -test.count 1 -test.timeout $(UNIT_TIMEOUT) $(UNIT_MODEL_ARGS) > ../$(UNIT_DIR)/$$t.out 2>&1 \
			&& echo "ok  	reconcile $$t" || { cat ../$(UNIT_DIR)/$$t.out; echo "FAIL	reconcile $$t"; exit 1; }) & pids="$$pids $$!"; \
	done; \
	failed=0; \
	$(GO) test -race -count=1 -timeout $(UNIT_TIMEOUT) $(UNIT_FLAGS) -skip '$(MODEL_TESTS_RE)' ./... || failed=1; \
	for p in $$pids; do wait $$p || failed=1; done; \
	exit $$failed
	@for m in $(filter-out . $(E2E_MODULES),$(MODULES)); do echo "go test -race ($$m)"; (cd $$m && $(GO) test -race -count=1 -timeout $(UNIT_TIMEOUT) $(UNIT_FLAGS) ./...) || exit 1; done

# The release tooling (hack/release, a module of its own). apidiff, pinned,
# compares the API of the library's modules (root, adapters) with the
# baselines stored under hack/release/api/VERSION (export data written by
# apidiff -m -w). api-check reads CHANGELOG.md's top section, "## Unreleased"
# or "## vX.Y.Z (to be tagged)", and fails on an incompatible change since
# the newest baseline (for vX.Y.Z, the newest older than it) that the
# section does not name as package.Name (e.g. reconcile.Config.Gate; a
# removed package by its path, adapters/metrics). make release VERSION=v…
# is the one step that makes a release commit, locally: it checks a clean
# tree, a "## v… (to be tagged)" section on top, the tags absent, the
# published go.mod files and the API changes named; writes the baseline
# hack/release/api/v… from HEAD's own tree (a temporary git worktree);
# dates the heading "## v… (YYYY-MM-DD)" with HEAD's commit date; commits
# both; and prints the git tag and git push commands. It pushes nothing.
APIDIFF       := $(GO) run golang.org/x/exp/cmd/apidiff@v0.0.0-20261113113407-e3970619a1a4
RELEASE       := $(GO) run -C hack/release .
VERSION       ?=

api-check: ## apidiff (pinned) of the root and adapters APIs against the newest baseline; CHANGELOG's top section must name incompatible changes
	@$(RELEASE) api-check -apidiff '$(APIDIFF)'

release: ## make the release commit for VERSION (checks, API baseline from HEAD's own tree, CHANGELOG heading dated) and print the tag and push commands; pushes nothing
	@test -n "$(VERSION)" || { echo "usage: make release VERSION=v0.2.0"; exit 2; }
	@$(RELEASE) release -apidiff '$(APIDIFF)' -version $(VERSION)

# go mod tidy and go get do not resolve through go.work's replace, and the
# adapters and examples require the root module (and the adapters) at a
# version that may not be published yet: in them, both run through a copy
# of their go.mod that replaces those modules with the working tree (with
# GOWORK=off), and the copy, less the replace lines, is written back
# (docs/development.md#modules-and-workspaces). M is adapters or examples,
# GOMOD the go command's arguments, e.g.
#   make gomod M=adapters GOMOD='get k8s.io/client-go@v0.33.1'
TIDY_DIR      := .cache/tidy
M             ?=
GOMOD         ?= mod tidy
define with-replace
	@case "$(1)" in adapters|examples) ;; *) echo "M must be adapters or examples"; exit 2;; esac
	@mkdir -p $(TIDY_DIR)
	@echo "go $(2) ($(1), through $(TIDY_DIR)/$(1).mod)"
	@m=$(1); reps="-replace=github.com/reconcilekit/reconcilekit=../"; drops="-dropreplace=github.com/reconcilekit/reconcilekit"; \
	if [ $$m = examples ]; then reps="$$reps -replace=github.com/reconcilekit/reconcilekit/adapters=../adapters"; \
		drops="$$drops -dropreplace=github.com/reconcilekit/reconcilekit/adapters"; fi; \
	cp $$m/go.mod $(TIDY_DIR)/$$m.mod && cp $$m/go.sum $(TIDY_DIR)/$$m.sum && \
	(cd $$m && export GOWORK=off && $(GO) mod edit -modfile=../$(TIDY_DIR)/$$m.mod $$reps && \
		GOFLAGS=-modfile=../$(TIDY_DIR)/$$m.mod $(GO) $(2) && \
		$(GO) mod edit -modfile=../$(TIDY_DIR)/$$m.mod $$drops) && \
	cp $(TIDY_DIR)/$$m.mod $$m/go.mod && cp $(TIDY_DIR)/$$m.sum $$m/go.sum
endef

tidy: ## go mod tidy in the root, adapters, examples and hack/release modules (adapters and examples through a temporary replace)
	GOWORK=off $(GO) mod tidy
	cd hack/release && $(GO) mod tidy
	$(call with-replace,adapters,mod tidy)
	$(call with-replace,examples,mod tidy)

gomod: ## go GOMOD (default: mod tidy) in module M (adapters or examples) through a temporary replace, e.g. GOMOD='get k8s.io/utils@…'
	$(call with-replace,$(M),$(GOMOD))

bench: ## the root module's benchmarks (BENCHTIME each)
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./...

# Every fuzz target of the root module, one after the other (go test
# -fuzz takes one target at a time); a package whose tests do not build
# fails the run instead of being skipped.
fuzz: ## every fuzz target of the root module for FUZZTIME each (long; not in make test)
	@n=0; for pkg in $$($(GO) list ./...); do \
		targets=$$($(GO) test -list '^Fuzz' $$pkg) || { echo "$$targets"; exit 1; }; \
		for f in $$(echo "$$targets" | grep '^Fuzz'); do \
			echo "fuzz $$pkg $$f ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
			n=$$((n+1)); \
		done; \
	done; echo "fuzz: $$n targets, $(FUZZTIME) each"

soak: ## the property and model-based tests with SOAKCHECKS rapid checks, TestModelSafeWithAnyOwner and TestModelNeverRunsAway with SAFETY_SOAK_CASES, the shards' TestModelShards with SHARD_SOAK_CASES and TestModelShardedNeverRunsAway with SHARD_SAFETY_SOAK_CASES (long)
	$(GO) test -race -count=1 -run 'Propert|Model|Sim' -skip '^TestModel(SafeWithAnyOwner|NeverRunsAway)$$' $(RAPID_PKGS) -args -rapid.checks=$(SOAKCHECKS)
	$(GO) test -race -count=1 -timeout 60m -run '^TestModelSafeWithAnyOwner$$' ./reconcile/ -args -rapid.checks=$(SOAKCHECKS) -safety.cases=$(SAFETY_SOAK_CASES)
	$(GO) test -race -count=1 -timeout 60m -run '^TestModelNeverRunsAway$$' ./reconcile/ -args -rapid.checks=$(SOAKCHECKS) -configsafety.cases=$(SAFETY_SOAK_CASES)
	cd adapters && $(GO) test -race -count=1 -timeout 60m -run '^TestModelShards$$' ./sharding/ -args -shardmodel.cases=$(SHARD_SOAK_CASES)
	cd adapters && $(GO) test -race -count=1 -timeout 60m -run '^TestModelShardedNeverRunsAway$$' ./sharding/ -args -shardsafety.cases=$(SHARD_SAFETY_SOAK_CASES)

scenarios: ## print the exact-expectations scenario tables (reconcile)
	$(GO) test -count=1 -run 'Scenario' -v ./reconcile/

demo: ## the ReplicaSet controller demo against an in-process cluster (examples/replicaset)
	cd examples && $(GO) run ./replicaset

# Non-blank, non-comment lines of each example's controller package, without
# tests and generated code (API types and main live in other packages).
lines: ## print the code lines of the two example controllers (figures, not budgets)
	$(GO) run ./hack/lines examples/replicaset/controller examples/podset/controller

# The PodSet controller's ClusterRole from its +kubebuilder:rbac markers
# (controller-gen, pinned; fetched and built once, then cached). make test
# does not run it: examples/podset/controller's TestRBACMarkersMatchRole
# checks that the checked-in file is what the markers say.
CONTROLLER_GEN := $(GO) run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0
rbac: ## regenerate examples/podset/config/rbac/role.yaml from the PodSet controller's RBAC markers
	cd examples/podset && $(CONTROLLER_GEN) rbac:roleName=reconcilekit-podset,headerFile=config/rbac/role_header.txt paths=./controller/... output:rbac:dir=config/rbac

# compat tests the supported ranges. The root go.mod is the floor of k8s.io
# (unit tests it); here the root tests run again at NEWEST_K8S through a
# go.mod generated under .cache/ (regenerated when go.mod or go.sum changes).
# The adapters' go.mod is their floor too (client-go and controller-runtime
# built on k8s.io v0.33; unit tests it); their tests run again at client-go
# NEWEST_K8S and controller-runtime NEWEST_CTRL_RUNTIME the same way. The
# scratch consumer modules under test/consumers must be tidy, build and
# pass their tests: floor and newest use client-go and the root module,
# adapters-floor and adapters-newest the adapters (clientgo and ctrlruntime
# on their fakes); each pair carries the same program. Test results are
# cached by go test: pass COMPATFLAGS=-count=1 to force a rerun.
NEWEST_K8S    ?= v0.37.2
NEWEST_CTRL_RUNTIME ?= v0.25.2
COMPATFLAGS   ?=
# The root tests run in full at the floor in unit; at the newest, compat
# leaves out hack/ (repository checks that read files, not k8s.io) and runs
# reconcile's two 50,000-case model tests at COMPAT_SAFETY_CASES cases: they
# draw owners and configurations, not k8s.io versions, and cost about 40 s
# each at 50,000 (docs/development.md#what-make-test-runs-once); so does
# adapters/sharding's TestModelShards (100,000 in unit): it draws replicas
# and Leases, not k8s.io versions.
COMPAT_SAFETY_CASES ?= 5000
# adapters/sharding's TestModelShardedNeverRunsAway in compat (6,000 in unit).
COMPAT_SHARD_SAFETY_CASES ?= 600
COMPAT_MOD    := .cache/compat/newest.mod
ADAPTERS_COMPAT_MOD := .cache/compat/adapters-newest.mod
CONSUMER_PAIRS := floor:newest adapters-floor:adapters-newest
CONSUMERS     := $(foreach p,$(CONSUMER_PAIRS),$(addprefix test/consumers/,$(subst :, ,$(p))))

compat: $(COMPAT_MOD) $(ADAPTERS_COMPAT_MOD) ## the supported ranges: root and adapters tests at the newest, the consumer modules at both ends
	@for p in $(CONSUMER_PAIRS); do a=test/consumers/$${p%%:*}; b=test/consumers/$${p##*:}; \
		for f in consumer.go consumer_test.go; do \
		cmp -s $$a/$$f $$b/$$f || { echo "compat: $$a/$$f and $$b/$$f differ"; exit 1; }; done; done
	@for m in $(CONSUMERS); do echo "go mod tidy -diff, build, vet, test -race ($$m)"; \
		(cd $$m && $(GO) mod tidy -diff && $(GO) build ./... && $(GO) vet ./... && \
		$(GO) test -race $(COMPATFLAGS) -timeout $(COMPAT_TIMEOUT) ./...) || exit 1; done
	@echo "go test -race at k8s.io $(NEWEST_K8S) (root module less hack/, $(COMPAT_MOD); $(MODEL_TESTS) at $(COMPAT_SAFETY_CASES) cases)"
	@pkgs=$$(GOWORK=off $(GO) list -modfile=$(COMPAT_MOD) ./... | grep -v '/hack/') && \
		GOWORK=off $(GO) test -race $(COMPATFLAGS) -timeout $(COMPAT_TIMEOUT) -modfile=$(COMPAT_MOD) \
		-skip '$(MODEL_TESTS_RE)' $$pkgs && \
		GOWORK=off $(GO) test -race $(COMPATFLAGS) -timeout $(COMPAT_TIMEOUT) -modfile=$(COMPAT_MOD) \
		-run '$(MODEL_TESTS_RE)' ./reconcile/ \
		-args -safety.cases=$(COMPAT_SAFETY_CASES) -configsafety.cases=$(COMPAT_SAFETY_CASES)
	@echo "go vet, go test -race at client-go $(NEWEST_K8S), controller-runtime $(NEWEST_CTRL_RUNTIME) (adapters, $(ADAPTERS_COMPAT_MOD))"
	@cd adapters && export GOWORK=off && $(GO) vet -modfile=../$(ADAPTERS_COMPAT_MOD) ./... && \
		$(GO) test -race $(COMPATFLAGS) -timeout $(COMPAT_TIMEOUT) -modfile=../$(ADAPTERS_COMPAT_MOD) -skip '^(TestModelShards|TestModelShardedNeverRunsAway)$$' ./... && \
		$(GO) test -race $(COMPATFLAGS) -timeout $(COMPAT_TIMEOUT) -modfile=../$(ADAPTERS_COMPAT_MOD) -run '^(TestModelShards|TestModelShardedNeverRunsAway)$$' ./sharding/ \
		-args -shardmodel.cases=$(COMPAT_SAFETY_CASES) -shardsafety.cases=$(COMPAT_SHARD_SAFETY_CASES)

$(COMPAT_MOD): go.mod go.sum
	@mkdir -p $(@D)
	cp go.mod $@
	cp go.sum $(@:.mod=.sum)
	GOWORK=off $(GO) get -modfile=$@ k8s.io/api@$(NEWEST_K8S) k8s.io/apimachinery@$(NEWEST_K8S)
	GOWORK=off $(GO) mod tidy -modfile=$@

# The adapters require the root module by version; the generated go.mod
# replaces it with ../ (go.work does not apply with -modfile), so the
# root's go.mod takes part in the version selection: a prerequisite too.
$(ADAPTERS_COMPAT_MOD): adapters/go.mod adapters/go.sum go.mod
	@mkdir -p $(@D)
	cp adapters/go.mod $@
	cp adapters/go.sum $(@:.mod=.sum)
	cd adapters && GOWORK=off $(GO) mod edit -modfile=../$@ -replace=github.com/reconcilekit/reconcilekit=../
	cd adapters && GOWORK=off $(GO) get -modfile=../$@ k8s.io/api@$(NEWEST_K8S) k8s.io/apimachinery@$(NEWEST_K8S) \
		k8s.io/client-go@$(NEWEST_K8S) sigs.k8s.io/controller-runtime@$(NEWEST_CTRL_RUNTIME)
	cd adapters && GOWORK=off $(GO) mod tidy -modfile=../$@

# Builds the five binaries once into .cache/controlplane/bin (a no-op when cached);
# without network and a cold module cache it fails, and e2e-test then skips outside CI.
controlplane: ## build etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok (cached)
	cd test/controlplane && $(GO) run ./cmd/controlplane build

e2e-test: ## test/controlplane's tests and the examples' e2e scenarios on a real control plane
	@cd test/controlplane && ( $(GO) run ./cmd/controlplane build >/dev/null || [ -z "$$CI" ] ) && \
		echo "go test -race (test/controlplane, real control plane)" && \
		$(GO) test -race -count=1 -timeout $(E2E_TIMEOUT) ./...

# COMPARE_ARGS, e.g. -runs 5, -pods 10000, -owners 1000 -pods 10, -contenders 0,2,4, -fault lost-event -parallel 4,
# -fault leader-kill | leader-pause | rolling-restart (two replicas per contender behind a Lease); see
# `go run ./cmd/controlplane compare -h` in test/controlplane.
COMPARE_ARGS ?=
compare: ## upstream's ReplicaSet controller against the examples' on real control planes (long)
	cd test/controlplane && $(GO) run ./cmd/controlplane compare $(COMPARE_ARGS)

demo-cluster: ## the ReplicaSet demo against a real control plane, with write counts
	cd test/controlplane && $(GO) run ./cmd/controlplane demo $(DEMO_CLUSTER_ARGS)

# Run in the module directory without a package argument, so that go test
# streams the output and the last line is the tally.
conformance-test: ## differential tests against the real k8s.io/kubernetes v1.37.2, >= 100,000 cases
	cd $(CONFORMANCE_DIR) && $(GO) test $(CONFORMANCE_FLAGS) -timeout $(CONFORMANCE_TIMEOUT) -args -rapid.checks=$(CONFORMANCE_CHECKS)

conformance: ## the same with >= 1,000,000 cases (long)
	cd $(CONFORMANCE_DIR) && $(GO) test $(CONFORMANCE_FLAGS) -timeout 60m -args -rapid.checks=$(CONFORMANCE_FULL_CHECKS)

operator-test: ## KubeRay's own tests before and after swapping its scale expectations for ours (long; not in make test)
	cd $(OPERATOR_DIR) && $(GO) test -count=1 -v -timeout $(OPERATOR_TIMEOUT) . -args $(OPERATOR_ARGS)

# Rewrite every benchmark figure in the Markdown files from
# docs/bench-upstream.txt (make test checks they agree). To refresh the table:
#   make bench-upstream | tee /tmp/t && { echo "# <machine, Go, date>"; cat /tmp/t; } > docs/bench-upstream.txt && make figures
figures: ## rewrite the Markdown benchmark figures from docs/bench-upstream.txt
	$(GO) run ./hack/figures -w

bench-upstream: ## side-by-side benchmarks against v1.37.2, one table of medians
	cd $(CONFORMANCE_DIR) && $(GO) test -run '^$$' -bench '$(BENCH_UPSTREAM_FILTER)' -benchmem -count $(BENCH_UPSTREAM_COUNT) \
		-benchtime $(BENCH_UPSTREAM_TIME) -timeout 60m -ldflags=-checklinkname=0 . | $(GO) run ./cmd/benchtable
