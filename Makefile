# reconcilekit — every command a developer or CI needs.
#   make test   gofmt check, go vet, staticcheck, go test -race (root module, adapters/ and examples/)
#   make bench  the benchmarks
#   make fuzz   the fuzz targets, FUZZTIME each (long; not part of make test)
#   make soak   the property and model-based tests with many more rapid checks (long)
#   make scenarios  the exact-expectations scenario tables (issue 7), printed
#   make demo   the in-process ReplicaSet controller demo (examples/replicaset)
#   make conformance-test  differential tests against the real k8s.io/kubernetes
#               v1.37.2 (internal/conformance), >= 100,000 cases; part of make test
#   make conformance       the same with >= 1,000,000 cases (long)
#   make bench-upstream    side-by-side benchmarks against v1.37.2, one table of medians
#   make lines  code lines of the two example controllers, against their goals (issue 13)

GO            ?= go
STATICCHECK   := $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
MODULES       := . $(wildcard adapters) $(wildcard examples)
FUZZTIME      ?= 30s
SOAKCHECKS    ?= 5000
BENCHTIME     ?= 1s
# internal/conformance is a module of its own (it requires k8s.io/kubernetes);
# it is vetted with the others but tested by conformance-test, because its
# tests bind unexported upstream functions (go:linkname) and need
# -ldflags=-checklinkname=0.
CONFORMANCE_DIR    := internal/conformance
CONFORMANCE_FLAGS  := -race -count=1 -ldflags=-checklinkname=0
# rapid checks per differential test: 2000 give ~170,000 cases, 20000 ~1,700,000.
CONFORMANCE_CHECKS ?= 2000
CONFORMANCE_FULL_CHECKS ?= 20000
BENCH_UPSTREAM_COUNT ?= 5
BENCH_UPSTREAM_TIME  ?= 500ms
# Packages whose tests use rapid; -rapid.* flags are unknown elsewhere.
RAPID_PKGS    ?= ./internal/podutil/ ./expectations/ ./slowstart/ ./podrank/ ./status/ ./reconcile/

.PHONY: all test fmt-check vet staticcheck unit bench fuzz soak scenarios demo conformance-test conformance bench-upstream lines

all: test

test: fmt-check vet staticcheck unit conformance-test

fmt-check:
	@out=$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt: these files need formatting:"; echo "$$out"; exit 1; fi

vet:
	@for m in $(MODULES) $(CONFORMANCE_DIR); do echo "go vet ($$m)"; (cd $$m && $(GO) vet ./...) || exit 1; done

staticcheck:
	@for m in $(MODULES) $(CONFORMANCE_DIR); do echo "staticcheck ($$m)"; (cd $$m && $(STATICCHECK) ./...) || exit 1; done

unit:
	@for m in $(MODULES); do echo "go test -race ($$m)"; (cd $$m && $(GO) test -race -count=1 ./...) || exit 1; done

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./...

fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "fuzz $$pkg $$f ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

soak:
	$(GO) test -race -count=1 -run 'Propert|Model|Sim' $(RAPID_PKGS) -args -rapid.checks=$(SOAKCHECKS)

scenarios:
	$(GO) test -count=1 -run 'Scenario' -v ./reconcile/

demo:
	cd examples && $(GO) run ./replicaset

# Run in the module directory without a package argument, so that go test
# streams the output and the last line is the tally.
conformance-test:
	cd $(CONFORMANCE_DIR) && $(GO) test $(CONFORMANCE_FLAGS) -args -rapid.checks=$(CONFORMANCE_CHECKS)

conformance:
	cd $(CONFORMANCE_DIR) && $(GO) test $(CONFORMANCE_FLAGS) -timeout 60m -args -rapid.checks=$(CONFORMANCE_FULL_CHECKS)

bench-upstream:
	cd $(CONFORMANCE_DIR) && $(GO) test -run '^$$' -bench '^BenchmarkVs' -benchmem -count $(BENCH_UPSTREAM_COUNT) \
		-benchtime $(BENCH_UPSTREAM_TIME) -timeout 60m -ldflags=-checklinkname=0 . | $(GO) run ./cmd/benchtable
# Non-blank, non-comment lines of each example's controller package, without
# tests and generated code (API types and main live in other packages).
lines:
	$(GO) run ./internal/cmd/lines examples/replicaset/controller=150 examples/podset/controller=60
