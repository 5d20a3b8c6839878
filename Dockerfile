# One image for both production processes: `shiphook api` and `shiphook worker`.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
# Memory (src/launcher/process-env.ts, which a test holds this line to): two malloc arenas,
# a heap limit that makes V8 collect instead of growing (raise it for very large events),
# and a small young generation (docs/performance.md).
ENV MALLOC_ARENA_MAX=2 NODE_OPTIONS="--max-old-space-size=384 --max-semi-space-size=4"
COPY package.json package-lock.json ./
# The package's own postinstall (`shiphook provision`, which fetches the temporal CLI for
# `shiphook dev`) runs the CLI, so the CLI comes first; with NODE_ENV=production it does nothing.
COPY bin ./bin
COPY src ./src
# patch-package applies patches/ to the Temporal worker (no watchdog thread per workflow call:
# src/engine/sandbox.ts says why, docs/performance.md what it buys).
COPY patches ./patches
RUN npm ci --omit=dev
COPY workflows ./workflows
COPY activities ./activities
COPY migrations ./migrations
COPY tsconfig.json ./
# Workers load this prebuilt workflow bundle instead of running webpack at every start; those
# that export traces (OTEL_* set) load the one with tracing beside it (src/engine/bundle.ts).
RUN node bin/shiphook.mjs bundle-workflows /app/workflow-bundle.js && \
    node bin/shiphook.mjs bundle-workflows /app/workflow-bundle.traced.js --traced
ENV SHIPHOOK_WORKFLOW_BUNDLE=/app/workflow-bundle.js
USER node
# Node flags: NODE_FLAGS in src/launcher/process-env.ts (Node accepts them only here, not in NODE_OPTIONS).
ENTRYPOINT ["node", "--single-threaded-gc", "--no-flush-bytecode", "--no-memory-reducer", "bin/shiphook.mjs"]
CMD ["api"]
