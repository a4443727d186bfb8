# One image for the five services; SERVICE picks which one a container runs.
# The same Node major as `make up` (infra/node.sh).
FROM node:24-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json tsconfig.base.json tsconfig.json ./
COPY packages ./packages
COPY services ./services
COPY patches ./patches
COPY infra/compile.ts infra/node-flags.sh ./infra/
RUN npm ci --omit=dev --no-audit --no-fund && npx tsx infra/compile.ts
ENV NODE_ENV=production TRIBUTARY_ENV=production HOST=0.0.0.0
ARG SERVICE=api
ENV SERVICE=${SERVICE}
CMD ["sh", "-c", "exec node $(sh infra/node-flags.sh ${SERVICE}) --conditions=tributary-compiled services/${SERVICE}/dist/main.js"]
