import t from 'tap';
import { call, testApp, tenantFixture } from '../../helpers/app.js';

/** The public web form wears the tenant's branding (CONTRACT §19); an unbranded tenant's page stays plain. */
t.setTimeout(120_000);

const fields = [{ name: 'email', type: 'email', required: true }, { name: 'message', type: 'textarea', required: true }];

t.test('web form pages use the tenant\'s branding', async (t) => {
  const env = await testApp(t);
  const branded = await tenantFixture(env);
  const plain = await tenantFixture(env);

  const formOf = async (token: string) => {
    const res = await call(env, 'POST', '/webforms', { token, body: { title: 'Contact us', fields } });
    t.equal(res.statusCode, 201, res.body);
    return res.json() as { id: string };
  };
  const page = async (id: string) => {
    const res = await env.app.inject({ method: 'GET', url: `/forms/${id}` });
    t.equal(res.statusCode, 200);
    return res.body;
  };

  const plainForm = await formOf(plain.admin.token);
  const brandedForm = await formOf(branded.admin.token);
  const before = await page(brandedForm.id);
  t.notMatch(before, /class="brand"/, 'no branding set yet: no brand header or footer');
  t.match(before, /button\{[^}]*background:#0b57d0/, 'the default colour');

  const res = await call(env, 'PATCH', '/branding', {
    token: branded.admin.token,
    body: { name: 'Globex Care', primary_color: '#123456', accent_color: '#abcdef', logo_url: 'https://cdn.globex.example/l.png', footer_html: '<p onclick="x()">Globex &amp; Co. <a href="https://globex.example/terms">Terms</a><script>alert(1)</script></p>' },
  });
  t.equal(res.statusCode, 200, res.body);

  const after = await page(brandedForm.id);
  t.match(after, /<header class="brand"><img src="https:\/\/cdn\.globex\.example\/l\.png" alt=""><span>Globex Care<\/span><\/header>/, 'name and logo');
  t.match(after, /button\{background:#123456\}/, 'primary colour');
  t.match(after, /:focus-visible\{outline-color:#abcdef\}/, 'accent colour');
  t.match(after, /<footer class="brand"><p>Globex &amp; Co\. <a href="https:\/\/globex\.example\/terms"[^>]*>Terms<\/a><\/p><\/footer>/, 'sanitised footer');
  t.notMatch(after, /<script|onclick/, 'nothing unsafe from the footer');
  t.match(after, /name="form_token"/, 'still the form');

  const other = await page(plainForm.id);
  t.notMatch(other, /Globex|class="brand"|#123456/, 'another tenant\'s page is untouched');
  t.equal(other.replace(/value="[^"]*"/, ''), before.replace(/value="[^"]*"/, '').replace(brandedForm.id, plainForm.id), 'the unbranded page is as before');
});
