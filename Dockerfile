# syntax=docker/dockerfile:1
# The plugflow image with Docker/BuildKit:  docker build -t plugflow/plugflow:0.1.0 .
# `make image` builds the same tree without a container engine (hack/image/build.sh); both use
# hack/image/base-rootfs.sh (Debian packages only) and hack/image/node-modules.sh, so keep them in
# step. The result runs the controller, server, agent and the init/wait containers of step pods.
#
#   /app                              package.json, bin/, dist/ (compiled), crds/, proto/ (the artifact
#                                     driver protocol, read at run time), production node_modules,
#                                     examples/plugins/*/main.js (the TypeScript example plugins, compiled)
#   /usr/local/bin/plugflow           launcher on PATH (hack/image/plugflow)
#   /usr/local/bin/plugflow-emissary  static emissary; `plugflow executor install` copies it into
#                                     the step pod's shared volume (src/pods/layout.ts)
#   user 65532:65532 (nonroot), no shell, no package manager

ARG DEBIAN_SUITE=trixie

# The emissary: a static Go binary (no libc needed in the user's step image).
FROM golang:1.26-bookworm AS emissary
WORKDIR /src
COPY emissary/ ./
RUN CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath -ldflags '-s -w' -o /out/plugflow-emissary .

# The compiled TypeScript and the production dependencies.
FROM node:20-bookworm-slim AS app
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src/ src/
RUN npx tsc -p tsconfig.build.json --outDir /out/app/dist --sourceMap false
COPY ui/ ui/
COPY hack/build-ui.ts hack/
RUN npx tsx hack/build-ui.ts --out /out/app/dist/ui
COPY hack/image/node-modules.sh hack/image/
RUN bash hack/image/node-modules.sh /src /out/app
COPY examples/plugins/ examples/plugins/
COPY hack/image/compile-examples.ts hack/image/
RUN npx tsx hack/image/compile-examples.ts /out/app
COPY package.json /out/app/
COPY bin/ /out/app/bin/
COPY crds/ /out/app/crds/
COPY proto/ /out/app/proto/

# The Debian root filesystem: Node.js 20 and CA certificates with their libraries, nothing else.
FROM debian:${DEBIAN_SUITE}-slim AS rootfs
ARG DEBIAN_SUITE
RUN apt-get update && apt-get install -y --no-install-recommends mmdebstrap ca-certificates \
  && rm -rf /var/lib/apt/lists/*
COPY hack/image/base-rootfs.sh /base-rootfs.sh
RUN bash /base-rootfs.sh "${DEBIAN_SUITE}" nodejs,ca-certificates /base \
  && mkdir -p /base/rootfs/home/nonroot && chown 65532:65532 /base/rootfs/home/nonroot \
  && chmod 0700 /base/rootfs/home/nonroot

FROM scratch
COPY --from=rootfs /base/rootfs/ /
COPY hack/image/passwd hack/image/group /etc/
COPY --from=app /out/app/ /app/
COPY --from=emissary /out/plugflow-emissary /usr/local/bin/plugflow-emissary
COPY hack/image/plugflow /usr/local/bin/plugflow
ENV PATH=/usr/local/bin:/usr/bin:/bin NODE_ENV=production HOME=/home/nonroot
USER 65532:65532
WORKDIR /app
ENTRYPOINT ["plugflow"]
CMD ["--help"]
