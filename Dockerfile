# The session service. Build: docker build -t session-service .   (or: docker compose up --build)
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
ENV NODE_ENV=production \
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
# tsconfig-paths maps @lib/* to dist/libs/* (TS_NODE_BASEURL=./dist)
CMD ["node", "-r", "tsconfig-paths/register", "dist/apps/session-service/src/main.js"]
