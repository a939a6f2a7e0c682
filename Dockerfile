# isa-monitor container image.
# Build: docker build -t isa-monitor .
# Run:   docker run -p 9464:9464 -v ./config.yaml:/etc/isa-monitor/config.yaml:ro \
#          -e ISA_PRODUCTION_API_KEY -e ISA_SANDBOX_API_KEY isa-monitor

# --- build stage: install with the lock file, bundle, then keep only what the bundle leaves out ---
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts/build.mjs scripts/build-plugins.mjs ./scripts/
COPY src ./src
COPY web ./web
# The bundle holds every package but package.json's `dependencies` (scripts/build.mjs): pruning to
# those leaves pino-pretty and what it needs, from the same lock file.
RUN npm run build && npm prune --omit=dev

# --- runtime stage: only what the daemon needs, as a non-root user ---
FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY alerts ./alerts
COPY dashboards ./dashboards
COPY examples ./examples
# The objectives `isa-monitor report` measures against (docs/cli.md, "report").
COPY slo ./slo
RUN chmod 0755 /app/dist/cli.js \
  && ln -s /app/dist/cli.js /usr/local/bin/isa-monitor \
  && mkdir -p /var/lib/isa-monitor /etc/isa-monitor \
  && chown node:node /var/lib/isa-monitor
# The session ledger (.isa-monitor/sessions.json) lives in the working directory: mount a
# volume here so sessions left open by a crash are closed by the next container.
WORKDIR /var/lib/isa-monitor
USER node
EXPOSE 9464
# Failed probes in the first 15 s do not count: a start on a busy host takes seconds.
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
  CMD node /app/dist/healthcheck.js
ENTRYPOINT ["isa-monitor"]
CMD ["run", "--config", "/etc/isa-monitor/config.yaml"]
