# syntax=docker/dockerfile:1
# fxgate: the v3 core and the v1/v2 gateway. The command is the role: `docker run IMAGE` runs
# `fxgate all` (both in one process), `docker run IMAGE gateway --upstream URL` and
# `docker run IMAGE core` one part each, and any other fxgate command runs as well
# (`docker run IMAGE keys list --org ...`). docs/operations.md#the-docker-image

# Build stage: compiles TypeScript to dist/. Dependencies are installed before the sources are
# copied so that the layer stays cached while only code changes. --ignore-scripts skips the
# package's `prepare` (a build, which needs the sources not copied yet); the build runs below.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json tsconfig.client.json ./
COPY src ./src
COPY mappings ./mappings
# v3's OpenAPI snapshot: the build copies it to dist/assets/, the gateway's migration guides are generated from it.
COPY docs/openapi/v3.json ./docs/openapi/v3.json
RUN npm run build

# Runtime stage: production dependencies and the compiled code (dist/mappings holds the legacy
# mapping tables, compiled from mappings/).
FROM node:24-bookworm-slim AS runtime
# HOST: the public listener on every interface of the container (fxgate's own default is
# 127.0.0.1, unreachable from outside it).
# FXGATE_ADMIN_HOST, FXGATE_ADMIN_PORT: the admin listener (GET /metrics, /admin/...) on every
# interface too, port 8081, in every role, so that Prometheus can scrape it. Off loopback it
# needs FXGATE_ADMIN_TOKEN or FXGATE_ADMIN_TOKEN_FILE: without one the container refuses to start
# (exit 2, naming what to set) rather than hide /metrics. FXGATE_ADMIN_HOST=127.0.0.1 keeps it
# inside the container; FXGATE_ADMIN_PORT=off turns it off.
# FXGATE_SANDBOX_SEED: no sandbox org or key of every scope unless asked for (=on).
# FXGATE_DATA_DIR: embedded database and key files when DATABASE_URL is unset; mount a volume
# there to keep them across containers.
ENV NODE_ENV=production \
    PORT=8080 \
    HOST=0.0.0.0 \
    FXGATE_ADMIN_HOST=0.0.0.0 \
    FXGATE_ADMIN_PORT=8081 \
    FXGATE_SANDBOX_SEED=off \
    FXGATE_DATA_DIR=/app/data
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would run the build, whose tools are dev dependencies.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
    && npm cache clean --force \
    && mkdir -p /app/data \
    && chown node:node /app/data
COPY --from=build /app/dist ./dist
# The image's own unprivileged user; the app files stay root-owned, so read-only to it.
USER node
# The public listener (PORT) and the admin listener (FXGATE_ADMIN_PORT).
EXPOSE 8080 8081
# Node's fetch rather than curl or wget, which the slim image does not have.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The flag sizes V8's young generation as src/cli/node-start-flags.ts says, whatever the
# container's memory limit.
ENTRYPOINT ["node", "--max-semi-space-size=16", "dist/cli/main.js"]
CMD ["all"]
