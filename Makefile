# plugflow — the two commands of the quick start are `make dev` and `make test`.
SHELL := /bin/bash
NPM ?= npm
export GOTOOLCHAIN := local

.PHONY: peer-examples peer-cli hera-client deps dev-deps system-packages-dev system-packages-test node-deps control-plane object-store blob-store gcs-store image-registry event-bus build lint format advisories crds test test-go test-unit test-kube test-system dev bench bench-peer bench-peer-node soak fuzz clean image image-verify test-images node node-up node-down test-node dev-node bench-node

## deps: everything `make test` needs on a fresh machine (Debian packages, npm packages, the control plane, the stores the tests use)
deps: system-packages-test node-deps control-plane object-store blob-store gcs-store image-registry event-bus peer-cli hera-client

## dev-deps: what `make dev` runs, and no more (Debian packages, npm packages, the control plane, the object store)
dev-deps: system-packages-dev node-deps control-plane object-store

## system-packages-dev / -test: the Debian packages of each command, installed as root or named with the one command that installs them
system-packages-dev:
	@bash hack/system-packages.sh dev

system-packages-test:
	@bash hack/system-packages.sh test

node-deps: node_modules/.package-lock.json
node_modules/.package-lock.json: package.json package-lock.json
	@node -e 'const [M]=process.versions.node.split(".").map(Number); const [, m] = process.versions.node.split(".").map(Number); if (M < 20 || (M === 20 && m < 19) || M === 21 || (M === 22 && m < 13) || M === 23) { console.error("plugflow needs Node.js ^20.19, ^22.13 or 24+ (package.json engines); this is " + process.version); process.exit(1); }'
	$(NPM) ci --no-audit --no-fund
	@touch $@

## control-plane: build (or reuse) kube-apiserver, kube-controller-manager and etcd in ~/.cache/plugflow
control-plane:
	@bash hack/build-control-plane.sh

## object-store: build (or reuse) MinIO in ~/.cache/plugflow, the S3 server artifacts are tested and developed against
object-store:
	@bash hack/build-store-server.sh minio

## blob-store: install (or reuse) Azurite in ~/.cache/plugflow, the Azure-compatible blob store vendorB artifacts are tested against
blob-store:
	@bash hack/install-azurite.sh

## gcs-store: build (or reuse) fake-gcs-server in ~/.cache/plugflow, the GCS emulator vendorCObject artifacts are tested against
gcs-store:
	@bash hack/build-store-server.sh fake-gcs-server

## image-registry: build (or reuse) the CNCF distribution registry in ~/.cache/plugflow, the registry image entrypoints are looked up in by the tests
image-registry:
	@bash hack/build-store-server.sh registry

## event-bus: build (or reuse) nats-server in ~/.cache/plugflow, the JetStream event bus of `make dev EVENTS=jetstream` and the tests
event-bus:
	@bash hack/build-store-server.sh nats-server

## peer-cli: build (or reuse) the peer's `argo` CLI in ~/.cache/plugflow, which test/argo-cli.test.ts runs against plugflow's server
peer-cli:
	@bash hack/build-peer.sh --cli >/dev/null

## hera-client: a Python environment with the peer's Python SDK (Hera, from PyPI) in ~/.cache/plugflow, which test/hera-client.test.ts runs against plugflow's server
hera-client:
	@bash hack/hera-venv.sh >/dev/null

## build: compile TypeScript to dist/ (the `plugflow` command runs from there) and bundle the web UI into dist/ui
build: node-deps
	npx tsc -p tsconfig.build.json
	npx tsx hack/build-ui.ts

## lint: strict type check of everything, ESLint, the Prettier format check, the CRDs are up to date with their source, imports obey the layers (hack/layout/layers.cjs), the layout tables are current and every package accepts the Node.js versions package.json promises
lint: node-deps
	npx tsc -p tsconfig.json --noEmit
	npx tsc -p ui/tsconfig.json
	npx eslint .
	npx prettier --check .
	npx tsx hack/gen-crds.ts --check
	npx tsx hack/gen-install.ts --check
	npx depcruise src --config .dependency-cruiser.cjs --output-type err
	npx tsx hack/gen-layout.ts --check
	npx tsx hack/check-engines.ts

## format: rewrite the code in Prettier's format (what `make lint` checks)
format: node-deps
	npx prettier --write .

## advisories: the runtime packages of package-lock.json against the dated advisories in docs/advisories.json (npm audit cannot reach its service here)
advisories: node-deps
	npx tsx hack/advisories.ts

## crds: regenerate crds/*.yaml from src/api, and manifests/install.yaml from crds/ + manifests/base/
crds: node-deps
	npx tsx hack/gen-crds.ts
	npx tsx hack/gen-install.ts

## test: unit tests (TypeScript and the Go emissary), then the Kubernetes-facing suites against a real control plane
test: deps build lint test-go
	npx vitest run --project unit --project kube
	npx vitest run --project system --no-file-parallelism
	@$(MAKE) --no-print-directory test-node

## test-node: plugflow installed with kubectl on a real node (test/node/); skipped, with the reason, where the node cannot start
test-node: deps build
	@if reason="$$(bash hack/node/up.sh --check)"; then \
	  $(MAKE) --no-print-directory node image test-images && npx vitest run --project node; \
	else echo "[test-node] skipped: $$reason"; fi

test-go:
	cd emissary && CGO_ENABLED=0 go test ./...

test-unit: node-deps
	npx vitest run --project unit

test-kube: deps build
	npx vitest run --project kube

## test-system: the CI soak (with chaos) and fuzz, one after the other, each with its own control plane
test-system: deps build
	npx vitest run --project system --no-file-parallelism

## dev: local control plane (or KUBECONFIG=... / CONTEXT=...), controller, server, pod runner, sample workflow; EVENTS=jetstream adds a 3-node event bus
dev: dev-deps build
	node bin/plugflow.js dev $(if $(KUBECONFIG_PATH),--kubeconfig $(KUBECONFIG_PATH)) $(if $(CONTEXT),--context $(CONTEXT)) \
	  --plugin examples/plugins/hello/hello-executor-plugin-configmap.yaml \
	  --submit examples/hello-world.yaml --submit examples/plugins/hello/workflow.yaml --submit examples/artifacts/artifact-passing.yaml \
	  $(if $(EVENTS),--events $(EVENTS)) $(DEV_FLAGS)

## dev-node: the same on a real node here (root): plugflow installed with kubectl apply of manifests/install.yaml and the built image
dev-node: deps build node image test-images
	node bin/plugflow.js dev --node=kubelet \
	  --plugin examples/plugins/hello/hello-executor-plugin-configmap.yaml \
	  --submit examples/hello-world.yaml --submit examples/plugins/hello/workflow.yaml $(DEV_FLAGS)

## bench-node: step pods on a real node beside the local runner (root), figures into bench/RESULTS.md
bench-node: deps build node image test-images
	npx tsx bench/node-bench.ts

## bench: every benchmark in bench/, figures into bench/RESULTS.md
bench: deps build
	npx tsx bench/run-all.ts

## bench-peer: plugflow's controller side by side with the peer's (Argo Workflows, built from the Go module proxy), figures into bench/RESULTS.md (PEER_POINTS, PEER_REPEATS, PEER_SHAPES, PEER_ENGINES)
bench-peer: deps build
	@bash hack/build-peer.sh
	npx tsx bench/peer-bench.ts

## bench-peer-node: container steps on the real node (root), plugflow installed with kubectl beside the peer's controller and executor image, figures into bench/RESULTS.md (PEER_NODE_WORKFLOWS, PEER_REPEATS, PEER_ENGINES)
bench-peer-node: deps build node image test-images
	@bash hack/build-peer.sh --exec-image > /dev/null
	npx tsx bench/peer-node-bench.ts

## peer-examples: the peer's example directory (PEER_EXAMPLES=dir, else its module from the Go module proxy), group and label prefix changed only: linted, and run on a dev stack of its own with PEER_RUN=1; figures into bench/RESULTS.md
peer-examples: dev-deps build
	npx tsx hack/peer-examples.ts

## soak: soak with chaos, about ten minutes (SOAK_SECONDS, SOAK_SEED, SOAK_CHAOS=0), figures into bench/RESULTS.md
soak: deps
	npx tsx hack/soak.ts

## fuzz: bounded fuzz of the server, the agent and cluster objects (FUZZ_PER, FUZZ_SEED), counts into bench/RESULTS.md
fuzz: deps
	npx tsx hack/fuzz.ts

## image: the plugflow image as an OCI archive in out/image/ (no container engine; see README "Release")
image: node-deps
	@bash hack/image/build.sh plugflow

## image-verify: run the image's CLI, executor and emissary inside its unpacked root filesystem as uid 65532 (root; also the test images when built)
image-verify:
	@bash hack/image/verify.sh

## test-images: images only tests use (python for the example plugins, shell for step pods)
test-images:
	@bash hack/image/build.sh python
	@bash hack/image/build.sh shell

## node: build (or reuse) kubelet, kube-proxy, kube-scheduler and kubectl in ~/.cache/plugflow (hack/node/build.sh)
node:
	@bash hack/node/build.sh

## node-up / node-down: a real three-node cluster (per node containerd and kubelet; one kube-proxy) with the images imported; root (hack/node/)
node-up: node
	@bash hack/node/up.sh

node-down:
	@bash hack/node/down.sh

clean:
	rm -rf dist
