# svc: run `make help` for the list of targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help
NPM_BIN := node_modules/.bin

.PHONY: help install build generate verify lint typecheck test ci dev bench screenshots clean image e2e

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

# Not `npm ci`: opencode-ai lists per-platform optional packages that the registry does not carry
# for this version, and `npm ci` refuses a lock without them; `npm install --no-save` installs
# exactly the locked versions, skips the missing optional ones, and never rewrites the lock.
node_modules/.package-lock.json: package-lock.json package.json
	npm install --no-save --no-audit --no-fund
	@touch $@

install: node_modules/.package-lock.json ## install the locked dependencies (and, as root, the Debian packages sandbox isolation needs)
	@scripts/system-packages.sh

build: install dist/.built ## compile TypeScript to dist/, bundle the CLI, svc-agent, the API, the operator and the dashboard

# What the build reads (tests aside): with none of them newer than the last build and all it makes
# there, `make build` (and so `make dev` and `make test`) starts at once instead of compiling the
# same files again.
BUILD_INPUTS := $(shell find bin src controllers daemon web crds -type f -not -name '*.test.ts') \
	package.json tsconfig.json tsconfig.build.json Makefile
BUILD_OUTPUTS := dist/src/cli/main.js dist/cli/svc.mjs dist/src/main/api.bundle.mjs dist/src/main/operator.bundle.mjs \
	dist/daemon/svc-agent.mjs dist/web/index.html
.PHONY: missing-build-output
dist/.built: node_modules/.package-lock.json $(BUILD_INPUTS) $(if $(filter-out $(wildcard $(BUILD_OUTPUTS)),$(BUILD_OUTPUTS)),missing-build-output)
	$(NPM_BIN)/tsc -p tsconfig.build.json
	node src/cli/bundle.mjs
	node src/main/bundle.mjs
	node daemon/bundle.mjs
	node web/build.mjs
	@touch $@

lint: install ## eslint, including the import fences of DESIGN.md §5
	$(NPM_BIN)/eslint .

typecheck: install ## tsc --noEmit over sources, tests and benchmarks (and the dashboard's browser code)
	$(NPM_BIN)/tsc -p tsconfig.json --noEmit
	$(NPM_BIN)/tsc -p web/tsconfig.json

test: build ## run every test; ends with "N passed, N failed"
	node scripts/test.mjs

generate: install ## regenerate CRDs (crds/, charts/svc/crds/) from the zod schemas
	$(NPM_BIN)/tsx src/crdgen/main.ts

verify: generate ## fail when generated files are stale
	@git diff --exit-code -- crds charts/svc/crds || { echo "generated CRDs are stale: run 'make generate' and commit" >&2; exit 1; }
	@test -z "$$(git status --porcelain -- crds charts/svc/crds)" || { echo "untracked generated CRDs: commit them" >&2; exit 1; }

ci: lint typecheck test ## what CI runs: lint, typecheck, tests

dev: build ## run the whole system on this machine (local cluster, operator, API); Ctrl-C stops it
	node bin/svc.js dev

bench: build ## run the benchmarks in bench/ and update docs/benchmarks.md
	@for b in bench/*/main.ts; do echo "== $$b"; $(NPM_BIN)/tsx $$b || exit 1; done

# The operator/API image; the chart's defaults (image.repository, appVersion) name the same one.
IMAGE ?= ghcr.io/svc-dev/svc
TAG ?= $(shell node -p "require('./package.json').version")
image: ## build the operator/API image (needs Docker): make image IMAGE=registry/svc TAG=x, then docker push
	docker build -f images/svc/Dockerfile -t $(IMAGE):$(TAG) .
	@echo "built $(IMAGE):$(TAG); push it with: docker push $(IMAGE):$(TAG)"

# The dashboard's browser tests with their screenshots kept in docs/dashboard/ (tracked: the docs
# show them). `make test` writes them to a temporary directory and leaves the tree clean.
screenshots: build ## re-take the dashboard screenshots in docs/dashboard/ (then review and commit them)
	SVC_SCREENSHOT_DIR=$(CURDIR)/docs/dashboard $(NPM_BIN)/vitest run test/dashboard

clean: ## remove build output
	rm -rf dist

e2e: ## kind cluster + images + chart + a session (needs Docker and kind; never run here, see docs/chart.md)
	scripts/e2e.sh
