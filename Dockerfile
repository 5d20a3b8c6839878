# One image for both production processes: `shiphook api` and `shiphook worker`.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev
COPY bin ./bin
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
COPY migrations ./migrations
COPY tsconfig.json ./
USER node
ENTRYPOINT ["node", "bin/shiphook.mjs"]
CMD ["api"]
