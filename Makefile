# reconcilekit — every command a developer or CI needs.
#   make test   gofmt check, go vet, staticcheck, go test -race (root module, adapters/ and examples/)
#   make bench  the benchmarks
#   make fuzz   the fuzz targets, FUZZTIME each (long; not part of make test)
#   make soak   the property and model-based tests with many more rapid checks (long)
#   make scenarios  the exact-expectations scenario tables (issue 7), printed
#   make demo   the in-process ReplicaSet controller demo (examples/replicaset)
#   make lines  code lines of the two example controllers, against their goals (issue 13)

GO            ?= go
STATICCHECK   := $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
MODULES       := . $(wildcard adapters) $(wildcard examples)
FUZZTIME      ?= 30s
SOAKCHECKS    ?= 5000
BENCHTIME     ?= 1s
# Packages whose tests use rapid; -rapid.* flags are unknown elsewhere.
RAPID_PKGS    ?= ./internal/podutil/ ./expectations/ ./slowstart/ ./podrank/ ./status/ ./reconcile/

.PHONY: all test fmt-check vet staticcheck unit bench fuzz soak scenarios demo lines

all: test

test: fmt-check vet staticcheck unit

fmt-check:
	@out=$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt: these files need formatting:"; echo "$$out"; exit 1; fi

vet:
	@for m in $(MODULES); do echo "go vet ($$m)"; (cd $$m && $(GO) vet ./...) || exit 1; done

staticcheck:
	@for m in $(MODULES); do echo "staticcheck ($$m)"; (cd $$m && $(STATICCHECK) ./...) || exit 1; done

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

# Non-blank, non-comment lines of each example's controller package, without
# tests and generated code (API types and main live in other packages).
lines:
	$(GO) run ./internal/cmd/lines examples/replicaset/controller=150 examples/podset/controller=60
