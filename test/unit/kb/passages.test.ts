import t from 'tap';
import { htmlSections, sentences, splitPassages } from '../../../src/kb/passages.js';
import { markdownSections } from '../../../src/kb/ingest/extract.js';
import { sniffDocument } from '../../../src/kb/ingest/sniff.js';
import { textSearchConfig } from '../../../src/kb/locale.js';

t.test('Markdown sections keep their heading path; the first # is the title', async (t) => {
  const { title, sections } = markdownSections('# Guide\n\nIntro text.\n\n## Setup\n\nStep one.\n\n### Wireless\n\n- Turn it on\n- Pick a channel\n\n## Support\n\nMail us.');
  t.equal(title, 'Guide');
  t.same(sections.map((s) => s.path.join(' > ')), ['', 'Setup', 'Setup > Wireless', 'Support']);
  t.match(sections[2]!.text, /- Turn it on\n\n- Pick a channel/);
  const article = htmlSections('<h1>A</h1><p>x</p><h2>B</h2><p>y</p>', { titleFromH1: false });
  t.same(article.sections.map((s) => s.path), [['A'], ['A', 'B']], 'articles keep their h1 in the path');
});

t.test('long sections are cut at paragraphs, then sentences, under the same heading', async (t) => {
  const paragraph = (n: number) => `${'Word '.repeat(40).trim()} number ${n}.`;
  const text = Array.from({ length: 12 }, (_, i) => paragraph(i)).join('\n\n');
  const passages = splitPassages([{ path: ['Long'], text }]);
  t.ok(passages.length > 2);
  t.ok(passages.every((p) => p.heading === 'Long' && p.text.length <= 1400));
  t.same(splitPassages([{ path: ['Empty'], text: '  \n ' }]), [], 'empty sections are dropped');
  const one = splitPassages([{ path: [], text: `${'A very long sentence without a break. '.repeat(60)}` }]);
  t.ok(one.every((p) => p.text.length <= 1400));
  t.same(sentences('First one. Second one! Third? 4 items. lower case. End'), ['First one.', 'Second one!', 'Third?', '4 items. lower case.', 'End']);
});

t.test('documents are sniffed from their bytes', async (t) => {
  t.equal(await sniffDocument(Buffer.from('# Title\n'), 'x.md', 'application/octet-stream'), 'text/markdown');
  t.equal(await sniffDocument(Buffer.from('plain words'), 'x.txt', undefined), 'text/plain');
  t.equal(await sniffDocument(Buffer.from('%PDF-1.4 broken'), 'x.pdf', 'application/pdf'), 'application/pdf');
  await t.rejects(sniffDocument(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52]), 'x.md', 'text/markdown'), { code: 'unsupported_media_type' });
  await t.rejects(sniffDocument(Buffer.from([0, 1, 2]), 'x.txt', 'text/plain'), { code: 'unsupported_media_type' });
  await t.rejects(sniffDocument(Buffer.alloc(0), 'x.txt', 'text/plain'), { code: 'unsupported_media_type' });
});

t.test('locales map to text search configurations', async (t) => {
  t.equal(textSearchConfig('en'), 'english');
  t.equal(textSearchConfig('pt-BR'), 'portuguese');
  t.equal(textSearchConfig('DE'), 'german');
  t.equal(textSearchConfig('ja'), 'simple');
});
