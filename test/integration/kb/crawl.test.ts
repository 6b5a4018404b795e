import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { call, testApp, tenantFixture } from '../../helpers/app.js';
import { runningKbJobs } from '../../../src/kb/jobs.js';

/** A small documentation site on loopback: robots.txt forbids /docs/private/; it logs every request. */
async function site(t: Test) {
  const pages: Record<string, string> = {
    '/robots.txt': 'User-agent: *\nDisallow: /docs/private/\n',
    '/docs/': page('Docs home', '<p>Welcome to the Acme router documentation.</p><a href="/docs/setup">Setup</a> <a href="setup#wifi">again</a> <a href="/docs/private/keys">Keys</a> <a href="http://example.invalid/elsewhere">Elsewhere</a> <a href="/docs/manual.bin">Binary</a> <a href="/docs/old">Old</a> <a href="/docs/missing">Missing</a>'),
    '/docs/setup': page('Setup', '<h2>Wireless</h2><p>To enable the wireless network, open Settings and switch on the radio. The default channel is eleven.</p><h2>Firmware</h2><p>Firmware updates install automatically every Sunday night.</p>'),
    '/docs/private/keys': page('Keys', '<p>The master key is hunter2 and must never be crawled.</p>'),
    '/docs/new': page('New place', '<p>The moved page explains the guest network, isolated from the office network.</p>'),
  };
  const requests: string[] = [];
  const state = { robotsDown: false };
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://site').pathname;
    requests.push(path);
    if (path === '/robots.txt' && state.robotsDown) {
      res.writeHead(503);
      return res.end();
    }
    if (path === '/docs/old') {
      res.writeHead(301, { location: '/docs/new' });
      return res.end();
    }
    if (path === '/docs/manual.bin') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      return res.end(Buffer.from([1, 2, 3]));
    }
    const body = pages[path];
    if (body === undefined) {
      res.writeHead(404, { 'content-type': 'text/html' });
      return res.end('<p>not found</p>');
    }
    res.writeHead(200, { 'content-type': path.endsWith('.txt') ? 'text/plain' : 'text/html; charset=utf-8' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, pages, requests, state };
}

function page(title: string, body: string) {
  return `<!doctype html><html><head><title>${title}</title></head><body><nav><a href="/docs/">Home</a></nav><main><article><h1>${title}</h1>${body}</article></main><footer>© Acme</footer></body></html>`;
}

t.test('crawling a documentation site', async (t) => {
  const env = await testApp(t, { webhooksAllowPrivate: true });
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const token = tenant.admin.token;
  const docs = await site(t);

  const started = await call(env, 'POST', '/kb-documents/crawl', { token, body: { url: `${docs.url}/docs/`, max_pages: 20 } });
  t.equal(started.statusCode, 202, started.body);
  t.match(started.json(), { id: /^[0-9a-f-]{36}$/, status: 'queued' });
  await runningKbJobs();
  const crawl = (await call(env, 'GET', `/kb-crawls/${started.json().id}`, { token })).json();
  t.match(crawl, { status: 'completed', url: `${docs.url}/docs/`, pages_indexed: 3 });
  t.equal(crawl.pages_fetched, 5, 'home, setup, the binary, the moved page and the missing one');
  t.match(crawl.errors, [{ url: `${docs.url}/docs/manual.bin`, message: /not HTML/ }, { url: `${docs.url}/docs/missing`, message: 'HTTP 404' }]);
  t.notOk(docs.requests.includes('/docs/private/keys'), 'robots.txt forbids /docs/private/');
  t.equal(docs.requests.filter((p) => p === '/docs/setup').length, 1, 'a page is fetched once (fragments are the same page)');

  const documents = (await call(env, 'GET', '/kb-documents', { token })).json().data as Array<{ id: string; source_url: string; status: string; content_type: string }>;
  t.same(documents.map((d) => d.source_url).sort(), [`${docs.url}/docs/`, `${docs.url}/docs/new`, `${docs.url}/docs/setup`]);
  t.ok(documents.every((d) => d.status === 'indexed' && d.content_type === 'text/html'));
  const ask = await call(env, 'POST', '/kb-documents/ask', { token, body: { query: 'how do I enable the wireless network?' } });
  t.match(ask.json().passages[0], { source: 'document', title: 'Setup', heading: 'Wireless', source_url: `${docs.url}/docs/setup` });
  t.match(ask.json().answer, /switch on the radio\. \[1\]/);
  t.notOk(JSON.stringify(ask.json()).includes('© Acme'), 'navigation and footer are not main text');
  const master = await call(env, 'POST', '/kb-documents/ask', { token, body: { query: 'master key hunter2' } });
  t.same(master.json().passages, []);
  t.equal((await call(env, 'GET', `/kb-crawls/${started.json().id}`, { token: other.admin.token })).statusCode, 404);
  t.same((await call(env, 'POST', '/kb-documents/ask', { token: other.admin.token, body: { query: 'wireless network' } })).json().passages, []);

  await t.test('a re-crawl re-indexes only the pages whose text changed', async (t) => {
    const before = await env.deps.db('kb_documents').where({ tenant_id: tenant.id }).select('source_url', 'indexed_at');
    docs.pages['/docs/setup'] = page('Setup', '<h2>Wireless</h2><p>To enable the wireless network, press the WLAN button for three seconds.</p>');
    const again = await call(env, 'POST', '/kb-documents/crawl', { token, body: { url: `${docs.url}/docs/` } });
    await runningKbJobs();
    const second = (await call(env, 'GET', `/kb-crawls/${again.json().id}`, { token })).json();
    t.match(second, { status: 'completed', pages_fetched: 5, pages_indexed: 1 });
    const after = await env.deps.db('kb_documents').where({ tenant_id: tenant.id }).select('source_url', 'indexed_at');
    const when = (rows: typeof before, url: string) => rows.find((r) => r.source_url === url)!.indexed_at.getTime();
    t.equal(when(after, `${docs.url}/docs/`), when(before, `${docs.url}/docs/`), 'the unchanged home page was not re-indexed');
    t.not(when(after, `${docs.url}/docs/setup`), when(before, `${docs.url}/docs/setup`), 'the changed page was');
    const ask2 = await call(env, 'POST', '/kb-documents/ask', { token, body: { query: 'how do I enable the wireless network?' } });
    t.match(ask2.json().answer, /WLAN button/);
    t.notOk(JSON.stringify(ask2.json()).includes('Firmware'), 'the removed section is gone');
  });

  await t.test('limits: max_pages and exclude prefixes', async (t) => {
    const one = await call(env, 'POST', '/kb-documents/crawl', { token, body: { url: `${docs.url}/docs/`, max_pages: 1 } });
    await runningKbJobs();
    t.match((await call(env, 'GET', `/kb-crawls/${one.json().id}`, { token })).json(), { status: 'completed', pages_fetched: 1 });
    const count = docs.requests.length;
    const excluded = await call(env, 'POST', '/kb-documents/crawl', { token, body: { url: `${docs.url}/docs/`, exclude: ['/docs/setup', '/docs/old'] } });
    await runningKbJobs();
    t.match((await call(env, 'GET', `/kb-crawls/${excluded.json().id}`, { token })).json(), { status: 'completed', pages_fetched: 3 }, 'home, the binary and the missing page');
    t.notOk(docs.requests.slice(count).includes('/docs/setup'));
    t.same(env.guard.violations, [], 'no query touched a tenant-owned table without tenant_id');
  });

  await t.test('a robots.txt answering 5xx stops the crawl before any page', async (t) => {
    docs.state.robotsDown = true;
    const count = docs.requests.length;
    const crawl = await call(env, 'POST', '/kb-documents/crawl', { token, body: { url: `${docs.url}/docs/` } });
    await runningKbJobs();
    t.match((await call(env, 'GET', `/kb-crawls/${crawl.json().id}`, { token })).json(), {
      status: 'failed', pages_fetched: 0, errors: [{ url: `${docs.url}/robots.txt`, message: /HTTP 503/ }],
    });
    t.same(docs.requests.slice(count), ['/robots.txt']);
    docs.state.robotsDown = false;
  });

  await t.test('bad input', async (t) => {
    t.equal((await call(env, 'POST', '/kb-documents/crawl', { token, body: { url: 'ftp://example.com/' } })).statusCode, 422);
    t.equal((await call(env, 'POST', '/kb-documents/crawl', { token, body: { url: `${docs.url}/`, include: ['no-slash'] } })).statusCode, 422);
    t.equal((await call(env, 'POST', '/kb-documents/crawl', { token, body: { url: `${docs.url}/`, max_pages: 0 } })).statusCode, 422);
  });
});

t.test('the outbound-target rules refuse private addresses', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  for (const url of ['http://127.0.0.1:9/docs/', 'https://127.0.0.1/docs/', 'https://169.254.169.254/latest/', 'https://localhost/']) {
    const response = await call(env, 'POST', '/kb-documents/crawl', { token: tenant.admin.token, body: { url } });
    t.equal(response.statusCode, 422, url);
  }
  t.equal(Number((await env.deps.db('kb_crawls').where({ tenant_id: tenant.id }).count({ n: '*' }))[0]!.n), 0);
});
