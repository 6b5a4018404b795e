import t from 'tap';
import http from 'node:http';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { call, testApp, tenantFixture, userFixture } from '../../helpers/app.js';
import { baseUrlOf } from '../../helpers/sse.js';

/**
 * The embeddable widget in a real headless Chromium: a local page (its own origin) carries the
 * widget's embed snippet; the visitor opens the widget, talks to the bot, is handed off; an agent
 * claims and replies through the API, and the reply appears in the page (the visitor's stream).
 */
t.setTimeout(240_000);

const CHROMIUM = process.env.HELPDESK_TEST_CHROMIUM ?? '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];

const missing = existsSync(CHROMIUM) ? false
  : `Chromium is not installed at ${CHROMIUM} (Debian package "chromium"; .ci/run installs it): the widget's browser test is skipped`;
{
  t.test('a visitor chats with the bot, is handed off, and sees the agent\'s reply', { skip: missing }, async (t) => {
    const { chromium } = await import('playwright-core');
    const env = await testApp(t, { streamMaxMs: 60_000, streamHeartbeatMs: 60_000 });
    const daemonUrl = await baseUrlOf(env.app);
    const a = await tenantFixture(env);
    const agent = await userFixture(env, a.id, 'agent');
    await call(env, 'POST', '/webchat/presence', { token: agent.token, body: { status: 'online' } });

    // The customer's site: another origin, serving one page that embeds the snippet.
    let page = '';
    const site = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(page);
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise<void>((resolve) => site.close(() => resolve())));
    const siteOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;

    const flow = (await call(env, 'POST', '/bot-flows', { token: a.admin.token, body: {
      name: 'Site bot', active: true, start_node: 'topic', nodes: [
        { id: 'topic', type: 'question', text: 'What do you need?', choices: [
          { label: 'Opening hours', target_node: 'hours' }, { label: 'Talk to a person', target_node: 'human' }] },
        { id: 'hours', type: 'message', text: 'We are open 9 to 5.', next: 'topic' },
        { id: 'human', type: 'handoff', text: 'Passing you to a colleague.' },
      ] } })).json();
    const widget = (await call(env, 'POST', '/webchat/widgets', { token: a.admin.token, body: {
      name: 'Shop', allowed_origins: [siteOrigin], greeting: 'Welcome to the shop!', bot_flow_id: flow.id,
    } })).json();
    // The snippet names the configured site URL; the test daemon listens on an ephemeral port.
    const snippet = (widget.embed_snippet as string).replace(env.config.siteUrl, daemonUrl);
    page = `<!doctype html><html><head><title>Shop</title></head><body><h1>Our shop</h1>${snippet}</body></html>`;

    const profile = mkdtempSync(join(tmpdir(), 'helpdesk-chromium-'));
    const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ARGS });
    t.teardown(async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    });
    const tab = context.pages()[0] ?? await context.newPage();
    const failures: string[] = [];
    tab.on('pageerror', (error) => failures.push(error.message));
    await tab.goto(siteOrigin + '/');

    await tab.click('#helpdesk-chat-launcher');
    await tab.waitForSelector('.helpdesk-chat-bot >> text=Welcome to the shop!', { timeout: 15_000 });
    await tab.waitForSelector('.helpdesk-chat-bot >> text=What do you need?', { timeout: 15_000 });

    // Typed answer, then a choice button.
    await tab.fill('#helpdesk-chat-input', 'Opening hours');
    await tab.press('#helpdesk-chat-input', 'Enter');
    await tab.waitForSelector('.helpdesk-chat-bot >> text=We are open 9 to 5.', { timeout: 15_000 });
    await tab.locator('.helpdesk-chat-choice', { hasText: 'Talk to a person' }).last().click();
    await tab.waitForSelector('.helpdesk-chat-bot >> text=Passing you to a colleague.', { timeout: 15_000 });

    const waiting = (await call(env, 'GET', '/webchat/conversations', { token: agent.token, query: { status: 'waiting' } })).json().data;
    t.equal(waiting.length, 1, 'the conversation waits for people');
    t.equal(waiting[0].offered_to_id, agent.id, 'offered to the online agent');
    const id = waiting[0].id;
    t.equal((await call(env, 'POST', `/webchat/conversations/${id}/claim`, { token: agent.token })).statusCode, 200);
    await tab.waitForSelector('.helpdesk-chat-note >> text=joined the chat', { timeout: 15_000 });
    t.equal((await call(env, 'POST', `/webchat/conversations/${id}/reply`, { token: agent.token, body: { message: 'Hello from a human' } })).statusCode, 201);
    await tab.waitForSelector('.helpdesk-chat-agent >> text=Hello from a human', { timeout: 15_000 });

    // The visitor answers from the page; it lands on the ticket.
    await tab.fill('#helpdesk-chat-input', 'Thanks!');
    await tab.press('#helpdesk-chat-input', 'Enter');
    const ticketId = (await call(env, 'GET', `/webchat/conversations/${id}`, { token: agent.token })).json().ticket_id;
    let bodies: string[] = [];
    for (let i = 0; i < 100 && !bodies.includes('Thanks!'); i++) {
      bodies = (await call(env, 'GET', `/tickets/${ticketId}/messages`, { token: agent.token })).json().data.map((m: { body: string }) => m.body);
      await new Promise((r) => setTimeout(r, 100));
    }
    t.ok(bodies.includes('Hello from a human') && bodies.includes('Thanks!'), 'both sides are on the ticket');

    await call(env, 'POST', `/webchat/conversations/${id}/end`, { token: agent.token });
    await tab.waitForSelector('.helpdesk-chat-note >> text=The chat has ended', { timeout: 15_000 });
    t.ok(await tab.isDisabled('#helpdesk-chat-input'));
    t.same(failures, [], 'no script errors in the page');
  });
}
