# One image for both production processes: `shiphook api` and `shiphook worker`.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
# Two malloc arenas: the worker's threads otherwise fragment memory (peak RSS 400 → 348 MB).
ENV MALLOC_ARENA_MAX=2
COPY package.json package-lock.json ./
RUN npm ci --omit=dev
COPY bin ./bin
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
COPY migrations ./migrations
COPY tsconfig.json ./
# Workers load this prebuilt workflow bundle instead of running webpack at every start.
RUN node bin/shiphook.mjs bundle-workflows /app/workflow-bundle.js
ENV SHIPHOOK_WORKFLOW_BUNDLE=/app/workflow-bundle.js
USER node
ENTRYPOINT ["node", "bin/shiphook.mjs"]
CMD ["api"]
