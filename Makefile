# reconcilekit — every command a developer or CI needs.
#   make test   gofmt check, go vet, staticcheck, go test -race (root module and examples/)
#   make bench  the benchmarks
#   make fuzz   the fuzz targets, FUZZTIME each (long; not part of make test)
#   make soak   the property and model-based tests with many more rapid checks (long)

GO            ?= go
STATICCHECK   := $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
MODULES       := . $(wildcard examples)
FUZZTIME      ?= 30s
SOAKCHECKS    ?= 5000
BENCHTIME     ?= 1s
# Packages whose tests use rapid; -rapid.* flags are unknown elsewhere.
RAPID_PKGS    ?= ./internal/... ./expectations/... ./slowstart/... ./podrank/... ./status/... ./reconcile/...

.PHONY: all test fmt-check vet staticcheck unit bench fuzz soak demo

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
	@for t in $$($(GO) test -list '^Fuzz' ./... | grep -E '^(Fuzz|ok)' | awk '/^Fuzz/{f=f" "$$1} /^ok/{if(f!=""){print $$2":"f}; f=""}'); do \
		pkg=$${t%%:*}; for f in $$(echo $${t#*:} | tr ':' ' '); do \
			echo "fuzz $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; done

soak:
	$(GO) test -race -count=1 -run 'Property|Model|Machine|Sim' $(RAPID_PKGS) -args -rapid.checks=$(SOAKCHECKS)
