# syntax=docker/dockerfile:1
# The console's image: Node 20 slim, production dependencies only (`npm ci --omit=dev`), the built SPA, the
# BFF and its CLI bundled to plain JavaScript (scripts/build-server.mjs: no TypeScript loader at run time;
# `node dist/server/cli.mjs evidence verify FILE` checks an export), and the
# renderers the diff runs (kustomize, helm, flux-render, jq-del), built from the same pinned Go modules as
# the sandbox (sandbox/go/*). Runs as uid 10001 with a read-only root filesystem (the chart mounts /data
# and /tmp). Build: docker build -t gitops-console:0.1.0 .

# --- the renderers ----------------------------------------------------------------------------------------------
FROM golang:1.26-bookworm AS tools
ENV CGO_ENABLED=0 GOFLAGS=-trimpath
WORKDIR /src
COPY sandbox/go/kustomize sandbox/go/kustomize
COPY sandbox/go/helm sandbox/go/helm
COPY sandbox/go/flux-render sandbox/go/flux-render
COPY sandbox/go/jq-del sandbox/go/jq-del
RUN set -eux; mkdir -p /out; \
  (cd sandbox/go/kustomize && go build -ldflags "-s -w -X sigs.k8s.io/kustomize/api/provenance.version=v5.8.2" -o /out/kustomize sigs.k8s.io/kustomize/kustomize/v5); \
  (cd sandbox/go/helm && go build -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=v3.22.0" -o /out/helm helm.sh/helm/v3/cmd/helm); \
  (cd sandbox/go/flux-render && go build -ldflags "-s -w" -o /out/flux-render .); \
  (cd sandbox/go/jq-del && go build -ldflags "-s -w" -o /out/jq-del .)

# --- the SPA and the bundled BFF ----------------------------------------------------------------------------------
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN node node_modules/vite/bin/vite.js build --logLevel warn && node scripts/build-server.mjs

# --- production dependencies (better-sqlite3 is native: built here, for this Node and libc) ----------------------
FROM node:20-slim AS deps
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# --- the image ------------------------------------------------------------------------------------------------------
FROM node:20-slim
# git: the write-back of freezes clones and pushes; tini: signals and zombies of the renderers
RUN apt-get update && apt-get install -y --no-install-recommends git ca-certificates tini \
  && rm -rf /var/lib/apt/lists/* \
  && groupadd --gid 10001 console && useradd --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin console
WORKDIR /app
ENV NODE_ENV=production \
  CONSOLE_HOST=0.0.0.0 \
  CONSOLE_PORT=8080 \
  CONSOLE_DATA_DIR=/data \
  CONSOLE_STATIC_DIR=/app/dist/web \
  CONSOLE_KUSTOMIZE=/usr/local/bin/kustomize \
  CONSOLE_HELM=/usr/local/bin/helm \
  CONSOLE_FLUX_RENDER=/usr/local/bin/flux-render \
  CONSOLE_JQ_DEL=/usr/local/bin/jq-del \
  HOME=/tmp
COPY --from=tools /out/ /usr/local/bin/
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist/web ./dist/web
COPY --from=build /app/dist/server ./dist/server
COPY package.json ./
RUN mkdir -p /data && chown 10001:10001 /data
USER 10001:10001
EXPOSE 8080
VOLUME ["/data"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--enable-source-maps", "dist/server/console.mjs"]
