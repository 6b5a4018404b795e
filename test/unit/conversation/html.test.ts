import t from 'tap';
import { htmlToText, sanitizeMessageHtml } from '../../../src/conversation/html.js';
import { sniffContentType } from '../../../src/conversation/sniff.js';

t.test('the text of sanitised HTML keeps lines and characters', async (t) => {
  const text = (html: string) => htmlToText(sanitizeMessageHtml(html));
  t.equal(text('<p>One &amp; two</p><p>3 &lt; 4 &gt; 2 "q" \'s\'</p>'), 'One & two\n3 < 4 > 2 "q" \'s\'');
  t.equal(text('a<br>b<br/>c'), 'a\nb\nc');
  t.equal(text('<ul><li>x</li><li>y</li></ul><p></p><p></p><p>z</p>'), 'x\ny\n\nz');
  t.equal(text('<script>alert(1)</script><style>p{}</style>'), '');
  t.equal(text('&amp;lt;b&amp;gt;'), '&lt;b&gt;', 'entities decode once');
});

t.test('content types come from the bytes', async (t) => {
  const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
  t.equal(await sniffContentType(png, 'text/plain'), 'image/png');
  t.equal(await sniffContentType(Buffer.from('a,b\n1,2\n'), 'text/csv; charset=utf-8'), 'text/csv');
  t.equal(await sniffContentType(Buffer.from('plain words'), undefined), 'text/plain');
  t.equal(await sniffContentType(Buffer.from('plain words'), 'image/svg+xml'), 'application/octet-stream', 'no trust in a declared non-text type');
  t.equal(await sniffContentType(Buffer.from([0xc3, 0x28]), 'text/plain'), 'application/octet-stream', 'not UTF-8');
  t.equal(await sniffContentType(Buffer.from('é', 'utf8').subarray(0, 1), 'text/plain'), 'text/plain', 'a head cut inside a character is still text');
  t.equal(await sniffContentType(Buffer.alloc(0), 'text/plain'), 'text/plain', 'an empty text file');
});
