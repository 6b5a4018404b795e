import t from 'tap';
import { htmlToText, renderHtml, renderSubject, unknownPlaceholders, type Values } from '../../../src/mail/render.js';
import { stripQuotedHtml, stripQuotedText } from '../../../src/mail/parse.js';
import { inboundTokenFor, tenantOfInboundToken } from '../../../src/mail/inbound-token.js';
import { isPublicAddress } from '../../../src/mail/host-guard.js';
import { subjectTicketNumber, ticketOfRootId } from '../../../src/mail/threading.js';
import { SecretBox } from '../../../src/core/crypto.js';

const values: Values = {
  'ticket.number': '42', 'ticket.subject': 'Line\r\nbreak <b>', 'ticket.url': 'https://x.example/t/1', 'customer.name': `O'Brien & <Co>`,
  'agent.name': 'Ann', 'message.body': 'a\nb', 'csat.url': 'https://x.example/csat',
};

t.test('the renderer replaces the seven names and nothing else', async (t) => {
  t.equal(renderHtml('<p>{{customer.name}} #{{ ticket.number }}</p>{{message.body}}', values), '<p>O&#39;Brien &amp; &lt;Co&gt; #42</p>a<br>b');
  t.equal(renderSubject('[{{ticket.subject}}]', values), '[Line break <b>]');
  t.equal(renderHtml('{{constructor}}{{__proto__.x}}{{ticket}}', values), '', 'unknown names render as nothing');
  t.same(unknownPlaceholders('{{ticket.number}} {{ticket.secret}} {{ x.y }} {{ticket.secret}}'), ['ticket.secret', 'x.y']);
  t.same(unknownPlaceholders('{{csat.url}} { {not} } {single}'), []);
  t.equal(htmlToText('<p>Hi &amp; bye</p><p><a href="https://a.example">link</a><br>x</p>'), 'Hi & bye\nlink (https://a.example)\nx');
  t.equal(htmlToText('<P>We got &lt;it&gt; &quot;#12&quot; &#39;x&#39; &eacute; &#x1F600; a &amp;lt; b<BR>ok</P>'), 'We got <it> "#12" \'x\' é 😀 a &lt; b\nok',
    'entities decoded once, upper-case tags read as tags');
  t.equal(htmlToText('<script>alert(1)</script><style>p{}</style>shown<textarea>t</textarea><select><option>o</option></select><!-- c -->'), 'shown',
    'what is not text a reader sees is left out');
  t.equal(htmlToText('<ul><li>a</li><li>b</li></ul><p>unclosed <b>bold'), 'a\nb\nunclosed bold');
});

t.test('quoted history below the reply marker is removed', async (t) => {
  const marker = '##- Reply above this line -##';
  t.equal(stripQuotedText(`Thanks!\n\nOn Mon, 1 Jan, Desk <d@x> wrote:\n> ${marker}\n> old`), 'Thanks!');
  t.equal(stripQuotedText(`Danke\n\nAm Montag schrieb Desk:\n>\n> ${marker}`), 'Danke');
  t.equal(stripQuotedText('No marker here\n> quoted stays'), 'No marker here\n> quoted stays');
  t.equal(stripQuotedHtml(`<p>New</p><blockquote><div>${marker}</div>old</blockquote>`), '<p>New</p><blockquote><div>');
});

t.test('inbound tokens name one tenant and cannot be forged', async (t) => {
  const box = new SecretBox('k1');
  const tenant = '01a20995-52e1-73a0-a7b4-13376accb4dc';
  const token = inboundTokenFor(box, tenant);
  t.equal(tenantOfInboundToken(box, token), tenant);
  t.equal(tenantOfInboundToken(new SecretBox('k2'), token), null, 'another instance secret');
  t.equal(tenantOfInboundToken(box, token.replace('01a2', '01a3')), null, 'another tenant id with the same HMAC');
  t.equal(tenantOfInboundToken(box, 'mi_x.y'), null);
});

t.test('hosts and threading helpers', async (t) => {
  for (const a of ['127.0.0.1', '10.0.0.1', '172.16.0.1', '192.168.1.1', '169.254.169.254', '::1', 'fe80::1', '::ffff:127.0.0.1', '0.0.0.0', '100.64.0.1', 'fc00::1']) t.notOk(isPublicAddress(a), a);
  for (const a of ['93.184.215.14', '2606:4700::1111']) t.ok(isPublicAddress(a), a);
  t.equal(ticketOfRootId('<ticket.01a20995-52e1-73a0-a7b4-13376accb4dc@desk.example>'), '01a20995-52e1-73a0-a7b4-13376accb4dc');
  t.equal(ticketOfRootId('<n.01a20995-52e1-73a0-a7b4-13376accb4dc@desk.example>'), null);
  t.equal(subjectTicketNumber('Re: [#123] Printer'), 123);
  t.equal(subjectTicketNumber('Re: #123 Printer'), null);
});
