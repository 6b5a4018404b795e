import t from 'tap';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { call, testApp, tenantFixture, userFixture, type TestEnv } from '../../helpers/app.js';
import { PNG_1X1, multipart, setStatus, ticketFixture, wavBytes, type FilePart } from '../../helpers/conversation.js';

const LIMIT = 4096;

/** Every file the blob store holds (under the data dir), partial ones included. */
function storedFiles(env: TestEnv): string[] {
  const root = join(env.config.dataDir, 'attachments');
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, withFileTypes: true }).filter((d) => d.isFile()).map((d) => d.name);
}
const attachmentCount = async (env: TestEnv) => Number((await env.deps.db('attachments').count({ n: '*' }).comment('cross-tenant: the test counts every row'))[0]!.n);

t.test('attachments', async (t) => {
  const env = await testApp(t, { attachmentMaxBytes: LIMIT });
  const tenant = await tenantFixture(env);
  const other = await tenantFixture(env);
  const agent = await userFixture(env, tenant.id, 'agent');
  const customer = await userFixture(env, tenant.id, 'customer');
  const stranger = await userFixture(env, tenant.id, 'customer');
  const ticket = await ticketFixture(env, tenant.id, customer.id);

  const post = async (token: string, body: Record<string, unknown>, ticketId = ticket.id) => {
    const res = await call(env, 'POST', `/tickets/${ticketId}/messages`, { token, body });
    t.equal(res.statusCode, 201, res.body);
    return res.json() as { id: string };
  };
  const upload = (token: string, messageId: string, parts: FilePart[], ticketId = ticket.id) => {
    const form = multipart(parts);
    return call(env, 'POST', `/tickets/${ticketId}/messages/${messageId}/attachments`, { token, body: form.payload, headers: form.headers });
  };
  const download = (token: string, id: string, headers: Record<string, string> = {}, suffix = '') =>
    call(env, 'GET', `/attachments/${id}${suffix}`, { token, headers });

  const reply = await post(agent.token, { body: 'See the attached files' });
  const note = await post(agent.token, { body: 'Internal logs', is_private: true });
  const customerMessage = await post(customer.token, { body: 'My screenshot' });

  await t.test('upload several files: 201 with their summaries; the message list shows them', async (t) => {
    const res = await upload(agent.token, reply.id, [
      { filename: 'notes.txt', type: 'text/plain', content: 'hello world\n' },
      { filename: 'dir/../pixel.png', type: 'image/png', content: PNG_1X1 },
    ]);
    t.equal(res.statusCode, 201, res.body);
    const data = res.json().data;
    t.match(data, [
      { filename: 'notes.txt', content_type: 'text/plain', size: 12 },
      { filename: 'pixel.png', content_type: 'image/png', size: PNG_1X1.length },
    ]);
    const list = await call(env, 'GET', `/tickets/${ticket.id}/messages`, { token: customer.token });
    const shown = list.json().data.find((m: { id: string }) => m.id === reply.id);
    t.same(shown.attachments, data);
    const row = await env.deps.db('attachments').where({ tenant_id: tenant.id, id: data[0].id }).first();
    t.match(row, { ticket_id: ticket.id, message_id: reply.id, uploaded_by: agent.id, sha256: /^[0-9a-f]{64}$/ });
  });

  await t.test('the type comes from the bytes: a PNG named .txt is image/png; HTML is never served inline', async (t) => {
    const res = await upload(agent.token, reply.id, [
      { filename: 'innocent.txt', type: 'text/plain', content: PNG_1X1 },
      { filename: 'page.html', type: 'text/html', content: '<html><script>alert(1)</script></html>' },
      { filename: 'fake.png', type: 'image/png', content: 'not really a png' },
      { filename: 'blob.bin', type: 'text/plain', content: Buffer.from([0, 1, 2, 3, 255]) },
    ]);
    t.equal(res.statusCode, 201, res.body);
    const [png, html, fake, blob] = res.json().data;
    t.equal(png.content_type, 'image/png');
    t.equal(html.content_type, 'text/html');
    t.equal(fake.content_type, 'application/octet-stream', 'a declared image type is not trusted');
    t.equal(blob.content_type, 'application/octet-stream', 'binary declared as text is not text');

    const image = await download(agent.token, png.id);
    t.equal(image.statusCode, 200);
    t.equal(image.headers['content-type'], 'image/png');
    t.match(image.headers['content-disposition'], /^inline; filename="?innocent\.txt"?$/);
    t.same(image.rawPayload, PNG_1X1);

    const page = await download(agent.token, html.id);
    t.equal(page.statusCode, 200);
    t.match(page.headers['content-type'], /^text\/html/);
    t.match(page.headers['content-disposition'], /^attachment; filename="?page\.html"?$/);
    t.equal(page.headers['x-content-type-options'], 'nosniff');
    t.match(page.headers['content-security-policy'], /sandbox/);
    t.equal(page.headers['accept-ranges'], 'bytes');
  });

  await t.test('file names are made safe for the header', async (t) => {
    const res = await upload(agent.token, reply.id, [{ filename: 'C:\\Users\\me\\résumé final.txt', type: 'text/plain', content: 'cv' }]);
    t.equal(res.statusCode, 201, res.body);
    const file = res.json().data[0];
    t.equal(file.filename, 'résumé final.txt', 'no path, the name kept');
    const got = await download(agent.token, file.id);
    t.equal(got.headers['content-disposition'], 'attachment; filename="r?sum? final.txt"; filename*=UTF-8\'\'r%C3%A9sum%C3%A9%20final.txt');
  });

  await t.test('Range: one range is 206, none satisfiable is 416, several ranges give the whole file', async (t) => {
    const content = 'abcdefghijklmnopqrstuvwxyz';
    const res = await upload(agent.token, reply.id, [{ filename: 'letters.txt', type: 'text/plain', content }]);
    const id = res.json().data[0].id;

    const part = await download(agent.token, id, { range: 'bytes=2-5' });
    t.equal(part.statusCode, 206);
    t.equal(part.body, 'cdef');
    t.equal(part.headers['content-range'], 'bytes 2-5/26');
    t.equal(part.headers['content-length'], '4');
    const tail = await download(agent.token, id, { range: 'bytes=-3' });
    t.equal(tail.statusCode, 206);
    t.equal(tail.body, 'xyz');
    const outside = await download(agent.token, id, { range: 'bytes=100-200' });
    t.equal(outside.statusCode, 416);
    t.equal(outside.json().code, 'range_not_satisfiable');
    t.equal(outside.headers['content-range'], 'bytes */26');
    const several = await download(agent.token, id, { range: 'bytes=0-1,5-6' });
    t.equal(several.statusCode, 200);
    t.equal(several.body, content);
    const malformed = await download(agent.token, id, { range: 'lines=1-2' });
    t.equal(malformed.statusCode, 200);
    t.equal(malformed.body, content);
  });

  await t.test('the stream route plays audio inline and honours Range', async (t) => {
    const wav = wavBytes();
    const res = await upload(agent.token, reply.id, [{ filename: 'call.wav', content: wav }]);
    const file = res.json().data[0];
    t.match(file.content_type, /^audio\/(wav|x-wav|vnd\.wave)$/);
    const stream = await download(agent.token, file.id, { range: 'bytes=0-3' }, '/stream');
    t.equal(stream.statusCode, 206);
    t.equal(stream.body, 'RIFF');
    t.match(stream.headers['content-disposition'], /^inline/);
    const plain = await download(agent.token, file.id);
    t.match(plain.headers['content-disposition'], /^attachment/, 'the download route offers it as a file');
  });

  await t.test('over the limit: 413, and neither row nor file is left', async (t) => {
    const rowsBefore = await attachmentCount(env);
    const filesBefore = storedFiles(env).length;
    for (const parts of [
      [{ filename: 'big.bin', content: Buffer.alloc(LIMIT + 1, 7) }],
      [{ filename: 'small.txt', type: 'text/plain', content: 'fine' }, { filename: 'big.bin', content: Buffer.alloc(LIMIT * 3, 7) }],
    ]) {
      const res = await upload(agent.token, reply.id, parts);
      t.equal(res.statusCode, 413, res.body);
      t.equal(res.json().code, 'payload_too_large');
    }
    t.equal(await attachmentCount(env), rowsBefore, 'no row');
    t.equal(storedFiles(env).length, filesBefore, 'no file, not even a partial one');
    const exact = await upload(agent.token, reply.id, [{ filename: 'exact.bin', content: Buffer.alloc(LIMIT, 1) }]);
    t.equal(exact.statusCode, 201, 'a file of exactly the limit is fine');
  });

  await t.test('bad uploads: no file part, a wrong part name, not multipart at all', async (t) => {
    const rowsBefore = await attachmentCount(env);
    const filesBefore = storedFiles(env).length;
    const empty = multipart([]);
    const none = await call(env, 'POST', `/tickets/${ticket.id}/messages/${reply.id}/attachments`, { token: agent.token, body: empty.payload, headers: empty.headers });
    t.equal(none.statusCode, 422, none.body);
    t.equal(none.json().details[0].field, 'file');
    const wrong = await upload(agent.token, reply.id, [{ filename: 'a.txt', type: 'text/plain', content: 'ok' }, { name: 'upload', filename: 'b.txt', content: 'x' }]);
    t.equal(wrong.statusCode, 422, wrong.body);
    t.equal(wrong.json().details[0].field, 'upload');
    const json = await call(env, 'POST', `/tickets/${ticket.id}/messages/${reply.id}/attachments`, { token: agent.token, body: { file: 'x' } });
    t.equal(json.statusCode, 415);
    const garbage = await call(env, 'POST', `/tickets/${ticket.id}/messages/${reply.id}/attachments`, {
      token: agent.token, body: 'not a form', headers: { 'content-type': 'multipart/form-data; boundary=x' },
    });
    t.equal(garbage.statusCode, 400, garbage.body);
    t.equal(garbage.json().code, 'bad_request');
    t.equal(await attachmentCount(env), rowsBefore);
    t.equal(storedFiles(env).length, filesBefore);
    const elsewhere = await call(env, 'POST', '/tickets/' + ticket.id + '/messages', { token: agent.token, body: 'x', headers: multipart([]).headers });
    t.equal(elsewhere.statusCode, 415, 'JSON routes still refuse multipart');
  });

  await t.test('who may upload where', async (t) => {
    const file = [{ filename: 'a.txt', type: 'text/plain', content: 'a' }];
    t.equal((await upload(customer.token, customerMessage.id, file)).statusCode, 201, 'a customer to their own message');
    t.equal((await upload(customer.token, reply.id, file)).statusCode, 403, "a customer to staff's public reply");
    t.equal((await upload(customer.token, note.id, file)).statusCode, 404, 'a customer to a private note');
    t.equal((await upload(stranger.token, customerMessage.id, file)).statusCode, 404, "another customer's ticket");
    t.equal((await upload(other.admin.token, reply.id, file)).statusCode, 404, 'another tenant');
    const otherTicket = await ticketFixture(env, tenant.id, customer.id);
    t.equal((await upload(agent.token, reply.id, file, otherTicket.id)).statusCode, 404, 'a message of another ticket');
    const closed = await ticketFixture(env, tenant.id, customer.id);
    const closedMessage = await post(agent.token, { body: 'last words' }, closed.id);
    await setStatus(env, tenant.id, closed.id, 'closed');
    const refused = await upload(agent.token, closedMessage.id, file, closed.id);
    t.equal(refused.statusCode, 409);
    t.equal(refused.json().code, 'conflict');
  });

  await t.test('who may download what', async (t) => {
    const file = [{ filename: 'a.txt', type: 'text/plain', content: 'secret' }];
    const onReply = (await upload(agent.token, reply.id, file)).json().data[0].id;
    const onNote = (await upload(agent.token, note.id, file)).json().data[0].id;
    t.equal((await download(customer.token, onReply)).statusCode, 200, 'the customer: a public reply on their ticket');
    t.equal((await download(customer.token, onNote)).statusCode, 404, 'the customer: not a private note');
    t.equal((await download(stranger.token, onReply)).statusCode, 404, "another customer: not someone else's ticket");
    t.equal((await download(agent.token, onNote)).statusCode, 200, 'staff: everything');
    const foreign = await download(other.admin.token, onReply);
    t.equal(foreign.statusCode, 404, 'another tenant');
    t.notOk(foreign.body.includes('secret'));
    t.equal((await download(agent.token, '0190a1b2-0000-7000-8000-000000000001')).statusCode, 404, 'unknown id');
    t.equal((await download(agent.token, 'nope')).statusCode, 404, 'malformed id');
    t.equal((await call(env, 'GET', `/attachments/${onReply}`)).statusCode, 401, 'anonymous');
  });

  await t.test('inline images: an image only; its uploader may load it until a message adopts it', async (t) => {
    const form = multipart([{ filename: 'shot.png', type: 'image/png', content: PNG_1X1 }]);
    const res = await call(env, 'POST', '/inline-images', { token: agent.token, body: form.payload, headers: form.headers });
    t.equal(res.statusCode, 201, res.body);
    const { id, url } = res.json();
    t.equal(url, `${env.config.siteUrl}/api/v1/attachments/${id}`);
    t.equal((await download(agent.token, id)).statusCode, 200);
    t.equal((await download(customer.token, id)).statusCode, 404, 'not yet the customer\'s to see');

    const rowsBefore = await attachmentCount(env);
    const filesBefore = storedFiles(env).length;
    for (const parts of [
      [{ filename: 'doc.txt', type: 'image/png', content: 'just text' }],
      [{ filename: 'vector.svg', type: 'image/svg+xml', content: '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>' }],
    ]) {
      const bad = multipart(parts);
      const refused = await call(env, 'POST', '/inline-images', { token: agent.token, body: bad.payload, headers: bad.headers });
      t.equal(refused.statusCode, 415, refused.body);
      t.equal(refused.json().code, 'unsupported_media_type');
    }
    const two = multipart([{ filename: 'a.png', content: PNG_1X1 }, { filename: 'b.png', content: PNG_1X1 }]);
    t.equal((await call(env, 'POST', '/inline-images', { token: agent.token, body: two.payload, headers: two.headers })).statusCode, 422);
    t.equal(await attachmentCount(env), rowsBefore);
    t.equal(storedFiles(env).length, filesBefore);

    const message = await post(agent.token, { body_html: `<p>Look:</p><img src="${url}" alt="shot">` });
    const list = await call(env, 'GET', `/tickets/${ticket.id}/messages`, { token: customer.token });
    t.same(list.json().data.find((m: { id: string }) => m.id === message.id).attachments.map((a: { id: string }) => a.id), [id]);
    t.equal((await download(customer.token, id)).statusCode, 200, 'shown in a public reply: the customer may load it');

    const mine = multipart([{ filename: 'me.png', content: PNG_1X1 }]);
    const own = (await call(env, 'POST', '/inline-images', { token: customer.token, body: mine.payload, headers: mine.headers })).json();
    t.equal((await download(customer.token, own.id)).statusCode, 200, 'a customer loads their own upload');
    t.equal((await download(stranger.token, own.id)).statusCode, 404, 'nobody else of the customers');
  });

  t.same(env.guard.violations, [], 'every query named its tenant');
});
