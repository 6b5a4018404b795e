import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import swagger from '@fastify/swagger';
import multipart from '@fastify/multipart';
import { openApiOptions } from './openapi/options.js';
import { buildValidator } from './input/validators.js';
import { buildSerializer } from './serializers.js';
import { textGuardPlugin } from './input/text-guard.js';
import type { Registry } from 'prom-client';
import type { Deps } from '../src/core/context.js';
import { AppError } from '../src/core/errors.js';
import type { Clock } from '../src/core/clock.js';
import { errorsPlugin, frameworkErrorHandler } from './plugins/errors.js';
import { identifyPlugin } from './plugins/identify.js';
import { memoryStore, rateLimitPlugin, redisStore, requestCounter } from './plugins/rate-limit.js';
import { metricsPlugin } from './plugins/metrics.js';
import { requestIdFrom, requestIdPlugin } from './plugins/request-id.js';
import { RAW_BODY_TYPES, registerRoute, type RouteDef } from './route.js';
import { streamsPlugin } from './sse.js';
import { webchatCorsPlugin } from './plugins/webchat-cors.js';
import { allRoutes, anyBodyRoutes, formRoutes } from './routes/index.js';
import { wireDomain } from '../src/wiring.js';
import { closeAllPools } from '../src/extensions/host.js';
import { runJob } from '../src/jobs/runner.js';
import { setImportJobStarter } from '../src/legacy-import/runs.js';
import { setKbJobStarter } from '../src/kb/jobs.js';
import { setArchiveJobStarter } from '../src/archiver/runs.js';

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Registry;
  }
}

export interface AppOptions {
  /** HTTPS options (cert, key); TLS 1.2 is the minimum. */
  https?: { cert: Buffer; key: Buffer };
  /** Extra routes (tests use this to exercise the pipeline itself). */
  extraRoutes?: RouteDef[];
  /**
   * When a request arrives, i.e. the `now` of everything it checks and changes (default: the wall
   * clock). Tests move it to see a credential expire without waiting.
   */
  clock?: Clock;
}

/**
 * Builds the Fastify app without listening ("the app is a plugin"): our plugins in order, then
 * every declared route. Tests drive it with inject(); `serve` adds listen and shutdown.
 */
export async function buildApp(deps: Deps, options: AppOptions = {}): Promise<FastifyInstance> {
  wireDomain();
  // A run queued through POST /legacy-import starts its job at once in the daemon that took it (the
  // job's schedule is the fallback). Set here because the jobs area lists the import's job, so the
  // import cannot import the job runner without a circle.
  setImportJobStarter((jobDeps) => runJob(jobDeps, 'legacy-import'));
  // Knowledge base uploads and crawls likewise start their job after commit. A run that finds the
  // job busy elsewhere is skipped; it tries again shortly, so the new work never waits a schedule.
  setKbJobStarter(async (jobDeps, name) => {
    for (let attempt = 0; attempt < 50; attempt += 1) {
      const run = await runJob(jobDeps, name);
      if (run.status !== 'skipped') return run;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return null;
  });
  // Likewise a run queued through POST /ticket-archiver/run.
  setArchiveJobStarter((jobDeps) => runJob(jobDeps, 'ticket-archive'));
  const countRequest = requestCounter({
    limit: deps.config.rateLimitPerMin,
    store: deps.redis ? redisStore(deps.redis) : memoryStore(),
  });
  const serverOptions: FastifyServerOptions = {
    loggerInstance: deps.log,
    genReqId: requestIdFrom,
    requestIdHeader: false,
    bodyLimit: deps.config.bodyLimitBytes,
    trustProxy: deps.config.trustProxy,
    // Bodies are validated without type coercion, query and path with it (input/validators.ts);
    // validators and serializers are compiled once per process (serializers.ts).
    schemaController: { compilersFactory: { buildValidator: buildValidator as never, buildSerializer: buildSerializer as never } },
    routerOptions: { ignoreTrailingSlash: true },
    frameworkErrors: frameworkErrorHandler(countRequest),
  };
  const app = options.https
    ? Fastify({ ...serverOptions, https: { ...options.https, minVersion: 'TLSv1.2' } } as FastifyServerOptions)
    : Fastify(serverOptions);

  app.decorate('deps', deps);
  app.decorate('routeDefs', [] as RouteDef[]);
  app.decorate('metrics', metricsPlugin(app));
  // Live streams end when the app closes, so a graceful shutdown does not wait on them.
  streamsPlugin(app);

  // An empty JSON body is no body (clients send Content-Type on body-less POSTs); anything else
  // goes through Fastify's parser, which also refuses __proto__ poisoning.
  // The API speaks JSON only: any other body type is 415 (routes needing one add its parser).
  app.removeContentTypeParser('text/plain');
  const defaultJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (typeof body === 'string' && body.trim() === '') return done(null, undefined);
    defaultJson(request, body as string, (error, value) => {
      if (error) return done(new AppError('invalid_json', 'The request body is not valid JSON'), undefined);
      done(null, value);
    });
  });

  // Uploads (routes that declare `multipart`; route.ts refuses multipart everywhere else). A file
  // part may hold one byte over the limit, so the service sees the excess and answers 413.
  await app.register(multipart, {
    limits: { fileSize: deps.config.attachmentMaxBytes + 1, files: 10, fields: 5, parts: 15, headerPairs: 50, fieldNameSize: 100 },
  });
  // Raw message bodies (the inbound mail route): bytes as they came, bounded per route.
  app.addContentTypeParser([...RAW_BODY_TYPES], { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  errorsPlugin(app);
  textGuardPlugin(app);
  requestIdPlugin(app);
  await identifyPlugin(app, options.clock);
  rateLimitPlugin(app, countRequest);
  // After the rate limit (a preflight counts and carries its headers like any answer).
  webchatCorsPlugin(app);

  await app.register(swagger, openApiOptions(deps.config.siteUrl, () => app.routeDefs));

  for (const def of [...allRoutes, ...(options.extraRoutes ?? [])]) registerRoute(app, def);
  // HTML forms post application/x-www-form-urlencoded: only the routes that serve a form accept it
  // (an encapsulated context), the API stays JSON-only.
  await app.register(async (forms) => {
    forms.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });
    for (const def of formRoutes) registerRoute(forms, def);
  });
  // Routes that pass a request through as it came (the extension hook): every media type as bytes.
  await app.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    for (const def of anyBodyRoutes) registerRoute(raw, def);
  });
  // Plugin instances run in worker threads: they end with the app.
  app.addHook('onClose', async () => closeAllPools());
  await app.ready();
  return app;
}
