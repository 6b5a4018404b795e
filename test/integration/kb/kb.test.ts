import { readFileSync } from 'node:fs';
import t from 'tap';
import { apiKeyFixture, call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { multipart } from '../../helpers/conversation.js';
import { ingest, pdfBytes, upload, xlsxBytes } from '../../helpers/kb.js';
import { runningKbJobs } from '../../../src/kb/jobs.js';
import { runJob } from '../../../src/jobs/runner.js';

const docx = readFileSync(new URL('../../fixtures/kb/files/manual.docx', import.meta.url));

t.test('knowledge base', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const admin = tenant.admin.token;
  const db = env.deps.db;
  const passages = async (where: Record<string, unknown>) => Number((await db('kb_passages').where({ tenant_id: tenant.id, ...where }).count({ n: '*' }))[0]!.n);

  const publicCat = (await call(env, 'POST', '/kb-categories', { token: admin, body: { name: 'Help', slug: 'help' } })).json();
  const internalCat = (await call(env, 'POST', '/kb-categories', { token: admin, body: { name: 'Runbooks', slug: 'runbooks', visibility: 'internal' } })).json();

  await t.test('categories: CRUD, unique slug, the public list', async (t) => {
    t.match(publicCat, { id: /^[0-9a-f-]{36}$/, name: 'Help', slug: 'help', visibility: 'public', position: 0, description: null });
    const dup = await call(env, 'POST', '/kb-categories', { token: admin, body: { name: 'Again', slug: 'help' } });
    t.equal(dup.statusCode, 409);
    t.equal(dup.json().code, 'already_exists');
    const bad = await call(env, 'POST', '/kb-categories', { token: admin, body: { name: 'Bad', slug: 'Not A Slug' } });
    t.equal(bad.statusCode, 422);
    const extra = (await call(env, 'POST', '/kb-categories', { token: agent.token, body: { name: 'Extra', slug: 'extra', position: 9 } })).json();
    const patched = await call(env, 'PATCH', `/kb-categories/${extra.id}`, { token: admin, body: { description: 'More' } });
    t.equal(patched.json().description, 'More');
    const pub = await call(env, 'GET', '/kb-categories/public', { tenant: tenant.slug });
    t.equal(pub.statusCode, 200);
    t.same(pub.json().data.map((c: { slug: string }) => c.slug), ['help', 'extra'], 'internal categories are not public');
    t.equal((await call(env, 'GET', '/kb-categories/public', {})).statusCode, 404, 'no tenant: 404 tenant_not_found');
    t.equal((await call(env, 'GET', '/kb-categories', { token: customer.token })).statusCode, 403);
    t.equal((await call(env, 'DELETE', `/kb-categories/${extra.id}`, { token: agent.token })).statusCode, 403, 'agents lack kb:delete');
    t.equal((await call(env, 'DELETE', `/kb-categories/${extra.id}`, { token: admin })).statusCode, 204);
    t.equal((await call(env, 'PATCH', `/kb-categories/${publicCat.id}`, { token: other.admin.token, body: { name: 'x' } })).statusCode, 404);
  });

  let resetArticle: { id: string };
  await t.test('articles: Markdown sanitised, drafts and publishing, per-locale slugs, the index', async (t) => {
    const created = await call(env, 'POST', '/kb-articles', {
      token: agent.token,
      body: {
        category_id: publicCat.id, title: 'Reset your password', slug: 'reset-password',
        body: '# Reset\n\nOpen the **sign-in page** and choose *Forgot password*. <script>alert(1)</script>\n\n## Expiry\n\nThe reset link expires after one hour.',
      },
    });
    t.equal(created.statusCode, 201, created.body);
    const article = created.json();
    resetArticle = article;
    t.match(article, { status: 'draft', visibility: 'public', locale: 'en', author_id: agent.id, published_at: null });
    t.match(article.body_html, /<strong>sign-in page<\/strong>/);
    t.notMatch(article.body_html, /script/);
    t.equal(await passages({ article_id: article.id }), 0, 'a draft is not indexed');
    t.equal((await call(env, 'GET', '/kb-articles/public/en/reset-password', { tenant: tenant.slug })).statusCode, 404, 'a draft is not public');

    const published = await call(env, 'PATCH', `/kb-articles/${article.id}`, { token: agent.token, body: { status: 'published' } });
    t.equal(published.statusCode, 200);
    t.match(published.json().published_at, /^\d{4}-/);
    t.ok(await passages({ article_id: article.id }) >= 1, 'publishing indexes it');
    const headings = await db('kb_passages').where({ tenant_id: tenant.id, article_id: article.id }).orderBy('position').pluck('heading');
    t.ok(headings.includes('Reset > Expiry'), `heading paths kept: ${headings.join(' | ')}`);

    const same = await call(env, 'POST', '/kb-articles', { token: admin, body: { category_id: publicCat.id, title: 'x', slug: 'reset-password', body: 'x' } });
    t.equal(same.statusCode, 409);
    const german = await call(env, 'POST', '/kb-articles', {
      token: admin, body: { category_id: publicCat.id, title: 'Passwort zurücksetzen', slug: 'reset-password', locale: 'de', body: 'Öffnen Sie die Anmeldeseite und wählen Sie Passwort vergessen.', status: 'published' },
    });
    t.equal(german.statusCode, 201, 'the same slug in another locale');
    const one = await call(env, 'GET', '/kb-articles/public/de/reset-password', { tenant: tenant.slug });
    t.equal(one.statusCode, 200);
    t.equal(one.json().title, 'Passwort zurücksetzen');
    t.notOk('author_id' in one.json());
    const foreignCategory = await call(env, 'POST', '/kb-articles', { token: other.admin.token, body: { category_id: publicCat.id, title: 'x', slug: 'x', body: 'x' } });
    t.equal(foreignCategory.statusCode, 422, "another tenant's category is not a category here");
    t.equal((await call(env, 'GET', `/kb-articles/${article.id}`, { token: other.admin.token })).statusCode, 404);
    t.equal((await call(env, 'DELETE', `/kb-articles/${article.id}`, { token: other.admin.token })).statusCode, 404);
    t.equal((await call(env, 'GET', '/kb-articles/public/en/reset-password', { tenant: other.slug })).statusCode, 404);
  });

  await t.test('internal articles never reach customers or anonymous callers', async (t) => {
    const secret = 'Rotate the vault unseal keys with the quorum ceremony';
    await call(env, 'POST', '/kb-articles', { token: admin, body: { category_id: publicCat.id, title: 'Vault unseal', slug: 'vault-unseal', body: `${secret}.`, visibility: 'internal', status: 'published' } });
    await call(env, 'POST', '/kb-articles', { token: admin, body: { category_id: internalCat.id, title: 'Quorum ceremony', slug: 'quorum', body: 'The quorum ceremony needs three officers.', status: 'published' } });
    const staff = await call(env, 'POST', '/kb-documents/ask', { token: agent.token, body: { query: 'vault unseal quorum ceremony' } });
    t.equal(staff.statusCode, 200);
    t.equal(staff.json().passages.length, 2, 'staff see both internal articles');
    t.match(staff.json().answer, /\[1\]/);
    const anonymous = await call(env, 'POST', '/kb-articles/public/ask', { tenant: tenant.slug, body: { query: 'vault unseal quorum ceremony' } });
    t.equal(anonymous.statusCode, 200);
    t.same(anonymous.json(), { query: 'vault unseal quorum ceremony', answer: null, passages: [] });
    const asCustomer = await call(env, 'POST', '/kb-articles/public/ask', { token: customer.token, body: { query: 'vault unseal quorum ceremony' } });
    t.same(asCustomer.json().passages, []);
    t.equal((await call(env, 'POST', '/kb-documents/ask', { token: customer.token, body: { query: 'vault' } })).statusCode, 403);
    const search = await call(env, 'GET', '/kb-articles/public', { tenant: tenant.slug, query: { q: 'vault quorum ceremony' } });
    t.same(search.json().data, [], 'the public search shows no internal article');
    const list = await call(env, 'GET', '/kb-articles/public', { tenant: tenant.slug });
    t.notOk(JSON.stringify(list.json()).includes('vault'), 'nor does the public list');
    t.equal((await call(env, 'GET', '/kb-articles/public/en/vault-unseal', { tenant: tenant.slug })).statusCode, 404);
    t.equal((await call(env, 'GET', '/kb-articles/public/en/quorum', { tenant: tenant.slug })).statusCode, 404, 'an article of an internal category is internal');
    // Opening the category opens its article, in the pages and in the index; closing it closes both.
    t.equal((await call(env, 'PATCH', `/kb-categories/${internalCat.id}`, { token: admin, body: { visibility: 'public' } })).statusCode, 200);
    t.equal((await call(env, 'GET', '/kb-articles/public/en/quorum', { tenant: tenant.slug })).statusCode, 200);
    t.equal((await call(env, 'POST', '/kb-articles/public/ask', { tenant: tenant.slug, body: { query: 'quorum ceremony officers' } })).json().passages[0]?.title, 'Quorum ceremony');
    await call(env, 'PATCH', `/kb-categories/${internalCat.id}`, { token: admin, body: { visibility: 'internal' } });
    t.same((await call(env, 'POST', '/kb-articles/public/ask', { tenant: tenant.slug, body: { query: 'quorum ceremony officers' } })).json().passages, []);
    t.equal((await call(env, 'DELETE', `/kb-categories/${internalCat.id}`, { token: admin })).statusCode, 409, 'a category with articles stays');
    // An API key of a customer with the scope still sees only public sources.
    const key = await apiKeyFixture(env, tenant.id, customer.id, ['kb_documents:read']);
    const viaKey = await call(env, 'POST', '/kb-documents/ask', { token: key.key, body: { query: 'vault unseal quorum ceremony' } });
    t.equal(viaKey.statusCode, 403, 'a customer key holds no more than its owner may');
  });

  await t.test('ask: extractive, cited, deterministic; the public search uses the same index', async (t) => {
    const body = { query: 'how long until the password reset link expires?' };
    const first = await call(env, 'POST', '/kb-documents/ask', { token: agent.token, body });
    t.equal(first.statusCode, 200);
    const answer = first.json();
    t.match(answer.answer, /expires after one hour\. \[1\]/);
    t.match(answer.passages[0], { source: 'article', id: resetArticle.id, title: 'Reset your password', heading: 'Reset > Expiry', source_url: null });
    const again = await call(env, 'POST', '/kb-documents/ask', { token: agent.token, body });
    t.same(again.json(), answer, 'the same query gives the same answer');
    const typo = await call(env, 'POST', '/kb-documents/ask', { token: agent.token, body: { query: 'pasword resett link' } });
    t.equal(typo.json().passages[0]?.id, resetArticle.id, 'trigram fuzziness finds misspelt words');
    const nothing = await call(env, 'POST', '/kb-documents/ask', { token: agent.token, body: { query: 'zebra migration patterns' } });
    t.same(nothing.json(), { query: 'zebra migration patterns', answer: null, passages: [] });
    const search = await call(env, 'GET', '/kb-articles/public', { tenant: tenant.slug, query: { q: 'password reset link' } });
    t.equal(search.json().data[0].id, resetArticle.id);
    const staffSearch = await call(env, 'GET', '/kb-articles', { token: agent.token, query: { q: 'vault' } });
    t.equal(staffSearch.json().data[0].slug, 'vault-unseal');
    const otherAsk = await call(env, 'POST', '/kb-documents/ask', { token: other.admin.token, body });
    t.same(otherAsk.json().passages, [], "another tenant's index is not searched");
    t.equal((await call(env, 'POST', '/kb-documents/ask', { token: agent.token, body: { query: '   ' } })).statusCode, 422);
  });

  await t.test('documents: PDF, DOCX, XLSX, Markdown and text are ingested into passages', async (t) => {
    const pdf = await ingest(env, admin, 'router.pdf', pdfBytes(['Router manual.', 'Hold the reset button for ten seconds to restore factory settings.']));
    t.match(pdf, { status: 'indexed', content_type: 'application/pdf', error: null, filename: 'router.pdf' });
    t.ok(pdf.passages >= 1);
    const word = await ingest(env, admin, 'manual.docx', docx);
    t.match(word, { status: 'indexed', content_type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' });
    const wordHeadings = await db('kb_passages').where({ tenant_id: tenant.id, document_id: word.id }).orderBy('position').pluck('heading');
    t.same(wordHeadings, ['Descaling', 'Warranty'], 'DOCX headings become heading paths');
    const sheet = await ingest(env, admin, 'prices.xlsx', await xlsxBytes('Plans', ['Plan', 'Monthly price'], [['Starter', '9 EUR'], ['Business', '49 EUR']]));
    t.match(sheet, { status: 'indexed', content_type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' });
    const md = await ingest(env, admin, 'notes.md', '# Notes\n\n## Backups\n\nBackups run nightly at two o\'clock.\n');
    t.equal(md.content_type, 'text/markdown');
    const text = await ingest(env, admin, 'plain.txt', 'The office is closed on public holidays.', 'text/plain');
    t.equal(text.content_type, 'text/plain');

    const ask = async (query: string) => (await call(env, 'POST', '/kb-documents/ask', { token: agent.token, body: { query } })).json();
    t.match((await ask('how do I restore factory settings on the router')).passages[0], { source: 'document', id: pdf.id });
    t.match((await ask('how often should I descale the espresso machine')).passages[0], { id: word.id, heading: 'Descaling', title: 'Espresso Machine Manual' });
    t.match((await ask('monthly price of the business plan')).passages[0], { id: sheet.id, heading: 'Plans' });
    t.match((await ask('when do backups run')).answer, /nightly at two o'clock\. \[1\]/);

    const list = await call(env, 'GET', '/kb-documents', { token: agent.token, query: { status: 'indexed' } });
    t.equal(list.json().meta.total, 5);
    t.equal((await call(env, 'GET', '/kb-documents', { token: other.admin.token })).json().meta.total, 0);
    t.equal((await call(env, 'GET', `/kb-documents/${pdf.id}`, { token: other.admin.token })).statusCode, 404);

    // Replacing the file re-ingests it; the old passages go.
    const { payload, headers } = multipart([{ filename: 'router.pdf', content: pdfBytes(['Router manual, second edition.', 'Press the WPS button to pair a device.']) }]);
    const replaced = await env.app.inject({ method: 'PUT', url: `/api/v1/kb-documents/${pdf.id}`, payload, headers: { ...headers, authorization: `Bearer ${admin}` } });
    t.equal(replaced.statusCode, 202, replaced.body);
    t.equal(replaced.json().status, 'queued');
    await runningKbJobs();
    const afterReplace = await ask('how do I restore factory settings on the router');
    t.notOk(afterReplace.passages.some((p: { text: string }) => p.text.includes('factory')), 'the old text is gone');
    t.equal((await ask('pair a device with the WPS button')).passages[0].id, pdf.id);

    // Deleting removes every passage.
    t.equal((await call(env, 'DELETE', `/kb-documents/${word.id}`, { token: agent.token })).statusCode, 403, 'agents lack kb_documents:delete');
    t.equal((await call(env, 'DELETE', `/kb-documents/${word.id}`, { token: other.admin.token })).statusCode, 404);
    t.equal((await call(env, 'DELETE', `/kb-documents/${word.id}`, { token: admin })).statusCode, 204);
    t.equal(await passages({ tenant_id: tenant.id, document_id: word.id }), 0);
    t.equal(await db('kb_terms').where({ tenant_id: tenant.id, lexeme: 'descal' }).first().then((r) => r?.df ?? 0), 0, 'term statistics follow');
  });

  await t.test('documents: a malformed PDF fails with its error; unknown types 415; oversize 413', async (t) => {
    const broken = await ingest(env, admin, 'broken.pdf', Buffer.from('%PDF-1.7\nthis is not really a PDF at all\n'));
    t.equal(broken.status, 'failed');
    t.match(broken.error, /PDF could not be read/);
    t.equal(broken.passages, 0);
    const png = await upload(env, admin, 'image.png', Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex'));
    t.equal(png.statusCode, 415);
    t.equal(png.json().code, 'unsupported_media_type');
    const binary = await upload(env, admin, 'blob.bin', Buffer.from([0, 1, 2, 3, 255, 254]));
    t.equal(binary.statusCode, 415);
    const big = await upload(env, admin, 'big.txt', Buffer.alloc(20 * 1024 * 1024 + 10, 'a'), 'text/plain');
    t.equal(big.statusCode, 413);
    t.equal(big.json().code, 'payload_too_large');
    const json = await call(env, 'POST', '/kb-documents', { token: admin, body: { file: 'x' } });
    t.equal(json.statusCode, 415, 'uploads are multipart');
    const count = Number((await db('kb_documents').where({ tenant_id: tenant.id }).count({ n: '*' }))[0]!.n);
    t.equal(count, 5, 'refused uploads leave no row (four kept, one failed)');
  });

  await t.test('the kb-ingest job takes up a document a dead process left processing', async (t) => {
    const doc = await ingest(env, admin, 'turbines.md', '# Turbines\n\n## Maintenance\n\nGrease the turbine bearings every month.');
    await db('kb_passages').where({ tenant_id: tenant.id, document_id: doc.id }).delete();
    await db('kb_documents').where({ tenant_id: tenant.id, id: doc.id }).update({ status: 'processing', passages: 0 });
    const run = await runJob(env.deps, 'kb-ingest');
    t.equal(run.status, 'succeeded');
    t.match(run.result, { indexed: 1, failed: 0 });
    t.match((await call(env, 'GET', `/kb-documents/${doc.id}`, { token: admin })).json(), { status: 'indexed', passages: 1 });
    t.same((await runJob(env.deps, 'kb-ingest')).result, { indexed: 0, failed: 0 }, 'nothing left: idempotent');
  });

  t.same(env.guard.violations, [], 'no query touched a tenant-owned table without tenant_id');
});
