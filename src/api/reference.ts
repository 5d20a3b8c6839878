import { createRequire } from 'node:module';
import express, { Router } from 'express';
import { ApiError } from '../errors/api-error';
import { servedAs } from './http-metrics';
import { OPENAPI_PATH, openapiJson } from './openapi';

/**
 * The API reference, without authentication: the OpenAPI document and `/docs`,
 * Swagger UI (npm swagger-ui-dist) served from node_modules, so it works offline.
 * Only its configuration is ours: which document to show.
 */
const SWAGGER_UI_DIR: string = createRequire(import.meta.url)('swagger-ui-dist').getAbsoluteFSPath();

const INITIALIZER = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: ${JSON.stringify(OPENAPI_PATH)},
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'StandaloneLayout',
  });
};
`;

export function referenceRoutes(): Router {
  const router = Router();
  router.get(OPENAPI_PATH, (_req, res) => {
    res.type('application/json').send(openapiJson());
  });
  router.all(OPENAPI_PATH, (_req, res) => {
    res.setHeader('Allow', 'GET');
    throw new ApiError('METHOD_NOT_ALLOWED', `Method not supported for ${OPENAPI_PATH}; use GET.`);
  });
  router.get('/docs', (req, res, next) => {
    if (!req.originalUrl.split('?')[0]!.endsWith('/')) return res.redirect(301, '/docs/');
    next();
  });
  router.get('/docs/swagger-initializer.js', (_req, res) => {
    res.type('application/javascript').send(INITIALIZER);
  });
  router.use('/docs', servedAs('/docs/*'), express.static(SWAGGER_UI_DIR, { index: 'index.html', redirect: false }));
  return router;
}
