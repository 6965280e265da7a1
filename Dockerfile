# The session service. Build: docker build -t session-service .   (or: docker compose up --build)
# Run: docker run -p 3000:3000 session-service. The image runs node on the built files (CMD below, node as PID 1 so
# SIGTERM reaches it), not `npm start`. The runtime stage has neither TypeScript nor the sources: `npm start` and
# `npm run rebuild-read-models` build only where tsconfig.build.json is (a source checkout), so both run here as they are
# (e.g. docker run --rm -v <volume>:/app/data session-service npm run rebuild-read-models, the service stopped).
# It listens on all interfaces (HOST=0.0.0.0), as a container must to be reached on its pod or bridge address.
# The image has no .git: give it the commit it is built from, which /health, /metrics and the start-up line name
# (`unknown` without it): docker build --build-arg BUILD_COMMIT=$(git rev-parse HEAD) -t session-service .
FROM node:20-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 ships prebuilt binaries for node 20; the toolchain is only a fallback
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY apps ./apps
COPY libs ./libs
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
# Empty when not given: BUILD_COMMIT empty counts as unset (the commit is then unknown).
ARG BUILD_COMMIT=
ENV BUILD_COMMIT=${BUILD_COMMIT} \
    NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/app/data \
    TS_NODE_BASEURL=./dist
COPY --from=build /app/package.json /app/tsconfig.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The audit page's static files (served at /ui; no build step)
COPY --from=build /app/apps/session-service/ui ./apps/session-service/ui
RUN mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 3000
# Liveness for Docker (compose's depends_on: service_healthy): GET /health on the container's own port, 200 within
# 2 s. The slim image has no curl or wget: node does it. (Kubernetes ignores HEALTHCHECK: use probes, see docs/configuration.md, "Docker and Kubernetes".)
# Liveness only: /health is 200 while the read models rebuild or catch up. Whatever routes traffic must check readiness,
# GET /health/ready (the compose file's HAProxy, a Kubernetes readinessProbe), or reads meet 503 projection_behind.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "require('http').get({host:'127.0.0.1',port:process.env.PORT||3000,path:'/health',timeout:2000},r=>process.exit(r.statusCode===200?0:1)).on('timeout',()=>process.exit(1)).on('error',()=>process.exit(1))"]
# npm start's default NODE_OPTIONS (package.json): --max-semi-space-size=4 keeps V8's young generation at 2 x 4 MiB
# (default 16: the start-up's tokenizer tables grew it to 32 MiB, held while the service idles; docs/performance.md,
# figure 7). A NODE_OPTIONS of the deployment replaces it.
ENV NODE_OPTIONS=--max-semi-space-size=4
# tsconfig-paths maps @lib/* to dist/libs/* (TS_NODE_BASEURL=./dist)
CMD ["node", "-r", "tsconfig-paths/register", "dist/apps/session-service/src/main.js"]
