# One image for both roles: the api (default) and `npm run start:worker`.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the sources are not copied yet, so `prepare` (the build) runs below instead.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY . .
RUN npm run build && npm run build:sdk && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The SDK's browser bundle, which the /verify page loads.
COPY --from=build /app/libs/sdk/dist/sigil.browser.js ./libs/sdk/dist/sigil.browser.js
COPY package.json ./
USER node
EXPOSE 3000
CMD ["node", "dist/apps/api/src/main.js"]
