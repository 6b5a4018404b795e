import t from 'tap';
import { isForbiddenAddress, urlShapeProblem } from '../../../src/webhooks/url-guard.js';
import { nextAttemptAfter, MAX_ATTEMPTS } from '../../../src/webhooks/ladder.js';
import { attemptHeaders } from '../../../src/webhooks/sender.js';

t.test('only public unicast addresses pass', async (t) => {
  for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '93.184.216.34']) t.notOk(isForbiddenAddress(address), address);
  for (const address of [
    '127.0.0.1', '127.8.9.1', '::1', '0.0.0.0', '::', '10.1.2.3', '172.31.255.255', '192.168.0.1', '169.254.169.254', '100.64.0.1',
    '100.100.100.200', 'fd00:ec2::254', 'fe80::1', 'fc00::1', '::ffff:127.0.0.1', '::ffff:169.254.169.254', '64:ff9b::a9fe:a9fe',
    '2002:7f00:1::', '2001:0:4136:e378::1', '224.0.0.1', '255.255.255.255', '240.0.0.1', '198.18.0.1', 'not-an-ip',
  ]) t.ok(isForbiddenAddress(address), address);
});

t.test('URL shapes', async (t) => {
  t.equal(urlShapeProblem('https://hooks.example.com/x', false), null);
  t.match(urlShapeProblem('http://hooks.example.com/x', false), { field: 'url', message: /https/ });
  t.equal(urlShapeProblem('http://127.0.0.1:8080/x', true), null, 'allowed with HELPDESK_WEBHOOKS_ALLOW_PRIVATE');
  t.match(urlShapeProblem('https://0x7f000001/x', false), { message: /loopback/ }, 'hex IPv4 is normalised, then refused');
  t.match(urlShapeProblem('https://[::ffff:a9fe:a9fe]/x', false), { message: /metadata/ });
  t.match(urlShapeProblem('https://localhost./x', false), { message: /loopback/ });
});

t.test('the ladder: 1 min, 5 min, 30 min, 2 h, 6 h, then dead', async (t) => {
  const now = new Date('2026-01-01T00:00:00Z');
  t.same([1, 2, 3, 4, 5].map((n) => (nextAttemptAfter(n, now)!.getTime() - now.getTime()) / 60_000), [1, 5, 30, 120, 360]);
  t.equal(nextAttemptAfter(6, now), null);
  t.equal(MAX_ATTEMPTS, 6);
});

t.test('static headers never override ours, whatever their case', async (t) => {
  const headers = attemptHeaders({
    url: 'https://x.test', secret: 'whsec_k', event: 'ticket.created', attemptId: 'a-1', body: '{}',
    staticHeaders: { 'X-HELPDESK-EVENT': 'forged', 'Content-Type': 'text/plain', 'X-Custom': 'kept' },
  });
  t.equal(headers['x-helpdesk-event'], 'ticket.created');
  t.equal(headers['content-type'], 'application/json');
  t.notOk('X-HELPDESK-EVENT' in headers);
  t.notOk('Content-Type' in headers);
  t.equal(headers['X-Custom'], 'kept');
  t.match(headers['x-helpdesk-signature'], /^sha256=[0-9a-f]{64}$/);
});
