import { readFileSync, readdirSync } from 'node:fs';
import t from 'tap';
import { call, testApp, tenantFixture } from '../../helpers/app.js';
import { upload } from '../../helpers/kb.js';
import { runningKbJobs } from '../../../src/kb/jobs.js';

/**
 * The evaluation set (test/fixtures/kb/README.md): the corpus goes in through the real upload and
 * ingestion job, every question through the ask route; recall@5 and MRR are reported, and
 * recall@5 below 0.8 fails.
 */
const dir = new URL('../../fixtures/kb/', import.meta.url);
const questions = JSON.parse(readFileSync(new URL('questions.json', dir), 'utf8')) as Array<{ q: string; doc: string; heading: string }>;

t.test('evaluation set: recall@5 and MRR', async (t) => {
  const env = await testApp(t);
  const tenant = await tenantFixture(env);
  const token = tenant.admin.token;
  const files = readdirSync(new URL('corpus/', dir)).filter((f) => f.endsWith('.md')).sort();
  for (const file of files) {
    const response = await upload(env, token, file, readFileSync(new URL(`corpus/${file}`, dir)), 'text/markdown');
    t.equal(response.statusCode, 202, response.body);
  }
  await runningKbJobs();
  const documents = (await call(env, 'GET', '/kb-documents', { token, query: { page_size: '100' } })).json().data as Array<{ id: string; filename: string; status: string; passages: number }>;
  t.ok(documents.every((d) => d.status === 'indexed'), 'every document is indexed');
  const fileOf = new Map(documents.map((d) => [d.id, d.filename]));
  t.ok(questions.length >= 50, `${questions.length} questions`);

  let found = 0;
  let reciprocal = 0;
  const misses: string[] = [];
  for (const question of questions) {
    const answer = await call(env, 'POST', '/kb-documents/ask', { token, body: { query: question.q, top_k: 5 } });
    t.equal(answer.statusCode, 200);
    const passages = answer.json().passages as Array<{ id: string; heading: string }>;
    const rank = passages.findIndex((p) => fileOf.get(p.id) === question.doc && p.heading === question.heading);
    if (rank >= 0) {
      found += 1;
      reciprocal += 1 / (rank + 1);
    } else {
      misses.push(`${question.q} → wanted ${question.doc} "${question.heading}", got ${passages.map((p) => `${fileOf.get(p.id)} "${p.heading}"`).join(', ') || 'nothing'}`);
    }
  }
  const recall = found / questions.length;
  const mrr = reciprocal / questions.length;
  t.comment(`evaluation: ${files.length} documents, ${documents.reduce((n, d) => n + d.passages, 0)} passages, ${questions.length} questions`);
  t.comment(`recall@5 = ${recall.toFixed(3)} (${found}/${questions.length}), MRR = ${mrr.toFixed(3)}`);
  for (const miss of misses) t.comment(`miss: ${miss}`);
  t.ok(recall >= 0.8, `recall@5 ${recall.toFixed(3)} is at least 0.8`);
});
