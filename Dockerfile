# syntax=docker/dockerfile:1
# fxgate: the v3 core and the v1/v2 gateway in one process (`fxgate all`).

# Build stage: compiles TypeScript to dist/. Dependencies are installed before the sources are
# copied so that the layer stays cached while only code changes. --ignore-scripts skips the
# package's `prepare` (a build, which needs the sources not copied yet); the build runs below.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY mappings ./mappings
RUN npm run build

# Runtime stage: production dependencies and the compiled code (dist/mappings holds the legacy
# mapping tables, compiled from mappings/).
FROM node:24-bookworm-slim AS runtime
# HOST: the service binds 127.0.0.1 by default, unreachable from outside a container.
# FXGATE_DATA_DIR: embedded database and key files when DATABASE_URL is unset; mount a volume
# there to keep them across containers.
ENV NODE_ENV=production \
    PORT=8080 \
    HOST=0.0.0.0 \
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
EXPOSE 8080
# Node's fetch rather than curl or wget, which the slim image does not have.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/cli/main.js", "all"]
